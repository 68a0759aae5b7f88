package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

// doneAtMarginTracer is the synthetic tracer that emits every frame of the
// plan it gets and, before it returns, moves the fake clock past the stop
// margin and waits to be stopped: the invocation's stop margin arrives with
// every frame traced (still buffered, unless a renewal tick flushed them).
func doneAtMarginTracer(e *env) tracer.Tracer {
	synth := tracer.NewSynthetic()
	return tracer.Func(func(ctx context.Context, m domain.Movie, p domain.TracePlan, emit func(domain.Frame) error) error {
		if err := synth.Trace(ctx, m, p, emit); err != nil {
			return err
		}
		e.fake.Step(8 * time.Second)
		<-ctx.Done()
		return ctx.Err()
	})
}

// TestStopMarginWithEveryFrameTracedCompletes (issue 21, mutant
// worker-done-at-margin): a segment the stop margin stops after its tracer
// emitted the plan's last frame flushes the buffered frames and, every
// frame being durable, completes the job: no hand-off, no continuation
// (which would claim a segment with nothing left to trace). Both for a
// first segment and for a continuation that resumed at a checkpoint.
func TestStopMarginWithEveryFrameTracedCompletes(t *testing.T) {
	const frames = 30 // fewer than a frame batch (worker.DefaultFrameBatch): no batch is full before the margin
	for _, tc := range []struct {
		name      string
		handedOff int // frames an earlier segment traced (0: this is the first segment)
	}{
		{name: "first segment"},
		{name: "continuation", handedOff: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newMemEnv(t)
			e.createMovie("mm", frames)
			job := e.start("mm", alice, 0, e.now(), lease)
			q := &memQueue{}
			if tc.handedOff > 0 {
				invoke(t, e, e.newWorker(budgetTracer(e, tc.handedOff), lease, segmentOptions(q)), "first", job)
				next := q.take()
				if len(next) != 1 || next[0].Segment != 1 || e.get("mm").Progress.FramesWritten != tc.handedOff {
					t.Fatalf("the first segment's hand-off: continuation %+v row %+v", next, e.get("mm"))
				}
				job = next[0]
			}
			tw := e.newWorker(doneAtMarginTracer(e), lease, segmentOptions(q))
			out := tw.Run(fakeDeadline{Context: context.Background(), at: e.now().Add(10 * time.Second)}, job)
			if out.Result != worker.ResultTraced || out.FramesWritten != frames || out.Err != nil {
				t.Fatalf("outcome %+v, want traced with %d frames", out, frames)
			}
			if sent := q.take(); len(sent) != 0 {
				t.Fatalf("a job with every frame written was handed off: %+v", sent)
			}
			m := e.get("mm")
			if m.Status != domain.StatusTraced || m.Lease != nil || m.CleanBefore != frames || m.LastJob.JobID != job.JobID || m.LastJob.Frames != frames {
				t.Fatalf("row %+v job %+v", m, m.LastJob)
			}
			if n := succeeded[domain.HandOffJob](tw.movies); n != 0 {
				t.Fatalf("%d HandOffJob after the last frame", n)
			}
			if puts := tw.putsWritten(); puts != frames-tc.handedOff {
				t.Fatalf("%d frames written by this segment, want %d", puts, frames-tc.handedOff)
			}
			checkJobFrames(t, e.stored("mm"), job.JobID, domain.PlanTrace(m, domain.Lease{FromFrame: 0}))
		})
	}
}

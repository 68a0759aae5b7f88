package worker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

// fakeDeadline is an invocation context whose deadline is on the fake
// clock: only the worker's own stop timer (on that clock) ends the job.
type fakeDeadline struct {
	context.Context
	at time.Time
}

func (c fakeDeadline) Deadline() (time.Time, bool) { return c.at, true }

// TestTwoSecondInvocationsCompleteAThirtySecondTrace (issue 12 item 4, the
// literal case): worker invocations of 2 s with the margins scaled to that
// budget (worker.MarginsFor), and a tracer that takes 100 ms a frame for
// 300 frames, i.e. 30 s of tracing. The trace completes through
// continuations: every frame once, by the job, in plan order, each
// invocation within its budget, none of them without progress.
func TestTwoSecondInvocationsCompleteAThirtySecondTrace(t *testing.T) {
	for _, budget := range []time.Duration{2 * time.Second, time.Second} {
		t.Run(budget.String(), func(t *testing.T) {
			const frames, perFrame = 300, 100 * time.Millisecond
			e := newMemEnv(t)
			e.createMovie("mb", frames)
			first := e.start("mb", alice, 0, e.now(), lease)
			q := &memQueue{}
			stop, reserve := worker.MarginsFor(budget)
			synth := tracer.NewSynthetic()
			var deadline time.Time
			tr := tracer.Func(func(ctx context.Context, m domain.Movie, p domain.TracePlan, emit func(domain.Frame) error) error {
				return synth.Trace(ctx, m, p, func(f domain.Frame) error {
					if !e.now().Add(perFrame).Before(deadline.Add(-stop)) {
						// This frame would run into the stop margin: the
						// worker's timer fires there; wait for it.
						e.fake.Step(deadline.Add(-stop).Sub(e.now()))
						<-ctx.Done()
						return ctx.Err()
					}
					e.fake.Step(perFrame)
					return emit(f)
				})
			})
			tw := e.newWorker(tr, lease, func(o *worker.Options) { o.Queue, o.StopMargin, o.StartReserve = q, stop, reserve })
			invocations := 0
			for msgs := []events.TraceJob{first}; len(msgs) > 0; msgs = q.take() {
				if len(msgs) != 1 {
					t.Fatalf("continuations %+v", msgs)
				}
				if invocations++; invocations > 100 {
					t.Fatal("more than 100 invocations")
				}
				start := e.now()
				deadline = start.Add(budget)
				out := tw.Worker.HandleMessage(fakeDeadline{context.Background(), deadline}, message(t, fmt.Sprint("inv-", invocations), msgs[0]))
				switch {
				case out.Result == worker.ResultHandedOff && out.FramesWritten > 0:
				case out.Result == worker.ResultTraced:
				default:
					t.Fatalf("invocation %d: %+v", invocations, out)
				}
				if e.now().After(deadline) {
					t.Fatalf("invocation %d ran %v, past its %v budget", invocations, e.now().Sub(start), budget)
				}
			}
			m := e.get("mb")
			if m.Status != domain.StatusTraced || m.LastJob.JobID != first.JobID || m.LastJob.Frames != frames {
				t.Fatalf("row %+v job %+v", m, m.LastJob)
			}
			checkJobFrames(t, e.stored("mb"), first.JobID, domain.PlanTrace(m, domain.Lease{}))
			if puts := tw.putsWritten(); puts != frames {
				t.Fatalf("%d frames written for %d", puts, frames)
			}
			if min := int(frames * perFrame / budget); invocations < min {
				t.Fatalf("%d invocations: a %v budget cannot trace %v in fewer than %d", invocations, budget, frames*perFrame, min)
			}
			t.Logf("%v budget (stop margin %v, start reserve %v): %d invocations", budget, stop, reserve, invocations)
		})
	}
}

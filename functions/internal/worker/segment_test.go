package worker_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

// budgetTracer is the synthetic tracer in an invocation that lasts perFrames
// frames: then it moves the fake clock past the stop margin and waits to be
// stopped, as a worker whose Lambda deadline approaches.
func budgetTracer(e *env, perFrames int) tracer.Tracer {
	synth := tracer.NewSynthetic()
	return tracer.Func(func(ctx context.Context, m domain.Movie, p domain.TracePlan, emit func(domain.Frame) error) error {
		n := 0
		return synth.Trace(ctx, m, p, func(f domain.Frame) error {
			if n == perFrames {
				e.fake.Step(8 * time.Second)
				<-ctx.Done()
				return ctx.Err()
			}
			n++
			return emit(f)
		})
	})
}

// invoke hands one job message to the worker as Lambda would, with an
// invocation deadline 10 s of the fake clock away.
func invoke(t *testing.T, e *env, tw *testWorker, id string, job events.TraceJob) lambdaevents.SQSEventResponse {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), e.now().Add(10*time.Second))
	defer cancel()
	resp, err := tw.Handle(ctx, lambdaevents.SQSEvent{Records: []lambdaMessage{message(t, id, job)}})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func segmentOptions(q worker.Queue) func(*worker.Options) {
	return func(o *worker.Options) { o.Queue, o.StopMargin, o.StartReserve = q, 2*time.Second, 4*time.Second }
}

// TestTraceSpanningManyInvocations (issue 12, item 4): a 300-frame trace
// whose invocations each last 60 frames completes in five segments. Each
// segment is claimed exactly once (a redelivered earlier segment and a
// duplicated continuation are no-ops), every frame is written once, by the
// job, in plan order, and the published progress never goes backwards.
func TestTraceSpanningManyInvocations(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("ms", 300)
	first := e.start("ms", alice, 0, e.now(), lease)
	q := &memQueue{}
	tw := e.newWorker(budgetTracer(e, 60), lease, segmentOptions(q))

	msgs := []events.TraceJob{first}
	var handed []int
	for seg := 0; len(msgs) > 0; seg++ {
		if seg > 5 {
			t.Fatalf("more than 5 segments: %v", handed)
		}
		if len(msgs) != 1 || msgs[0].Segment != seg || msgs[0].JobID != first.JobID {
			t.Fatalf("segment %d: continuation messages %+v", seg, msgs)
		}
		if resp := invoke(t, e, tw, fmt.Sprint("seg-", seg), msgs[0]); len(resp.BatchItemFailures) != 0 {
			t.Fatalf("segment %d left for redelivery: %+v", seg, resp)
		}
		// A redelivery of this segment's message after its claim is a no-op.
		if resp := invoke(t, e, tw, fmt.Sprint("seg-", seg, "-again"), msgs[0]); len(resp.BatchItemFailures) != 0 {
			t.Fatalf("redelivery of segment %d: %+v", seg, resp)
		}
		m := e.get("ms")
		handed = append(handed, m.Progress.FramesWritten)
		msgs = q.take()
	}
	if want := []int{60, 120, 180, 240, 300}; fmt.Sprint(handed) != fmt.Sprint(want) {
		t.Fatalf("progress after each segment %v, want %v", handed, want)
	}
	claims := 0
	for _, c := range tw.movies.snapshot() {
		if _, ok := c.cmd.(domain.ClaimSegment); ok && c.err == nil {
			claims++
		}
	}
	if claims != 5 {
		t.Fatalf("%d segment claims, want 5", claims)
	}
	if n := succeeded[domain.BeginTrace](tw.movies); n != 1 {
		t.Fatalf("%d BeginTrace: only the first segment plans and clears", n)
	}
	if puts := tw.putsWritten(); puts != 300 {
		t.Fatalf("%d frames written for 300: a frame was written twice", puts)
	}
	m := e.get("ms")
	if m.Status != domain.StatusTraced || m.Lease != nil || m.CleanBefore != 300 || m.LastJob.JobID != first.JobID || m.LastJob.Frames != 300 {
		t.Fatalf("row %+v job %+v", m, m.LastJob)
	}
	checkJobFrames(t, e.stored("ms"), first.JobID, domain.PlanTrace(m, domain.Lease{FromFrame: 0}))
	last := -1
	for _, c := range tw.movies.snapshot() {
		if c.err == nil && c.row.Progress.FramesWritten < last && c.row.Status == domain.StatusTracing {
			t.Fatalf("progress went back from %d to %d at %T", last, c.row.Progress.FramesWritten, c.cmd)
		}
		if c.err == nil {
			last = c.row.Progress.FramesWritten
		}
	}
}

// TestDuplicatedContinuationIsClaimedOnce: two copies of one continuation
// delivered at the same time to two workers: one claim, one writer.
func TestDuplicatedContinuationIsClaimedOnce(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("md", 300)
	job := e.start("md", alice, 0, e.now(), lease)
	q := &memQueue{}
	invoke(t, e, e.newWorker(budgetTracer(e, 100), lease, segmentOptions(q)), "first", job)
	next := q.take()
	if len(next) != 1 || next[0].Segment != 1 {
		t.Fatalf("continuation %+v", next)
	}
	workers := []*testWorker{e.newWorker(tracer.NewSynthetic(), lease), e.newWorker(tracer.NewSynthetic(), lease)}
	var wg sync.WaitGroup
	outs := make([]worker.Outcome, 2)
	for i, w := range workers {
		wg.Go(func() { outs[i] = w.Run(context.Background(), next[0]) })
	}
	wg.Wait()
	traced, noop := 0, 0
	for _, o := range outs {
		switch o.Result {
		case worker.ResultTraced:
			traced++
		case worker.ResultNotClaimed:
			noop++
		}
	}
	if traced != 1 || noop != 1 {
		t.Fatalf("outcomes %+v", outs)
	}
	checkJobFrames(t, e.stored("md"), job.JobID, domain.PlanTrace(e.get("md"), domain.Lease{}))
}

// TestSegmentWithoutProgressIsNotHandedOff: a segment that traced nothing
// before its deadline fails the job "ran out of time" instead of handing it
// off forever. The first segment's clearing is progress of its own (on a
// loaded machine or a long movie it can take the whole invocation), so a
// first segment that cleared and traced nothing hands off once; its
// continuation, tracing nothing either, fails the job.
func TestSegmentWithoutProgressIsNotHandedOff(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("mn", 300)
	job := e.start("mn", alice, 0, e.now(), lease)
	q := &memQueue{}
	tw := e.newWorker(budgetTracer(e, 0), lease, segmentOptions(q))
	invoke(t, e, tw, "first", job)
	next := q.take()
	if len(next) != 1 || next[0].Segment != 1 {
		t.Fatalf("the first segment cleared: want one continuation, got %+v", next)
	}
	if m := e.get("mn"); m.Status != domain.StatusTracing || m.Progress.FramesWritten != 0 || m.Lease.Segment != 1 {
		t.Fatalf("after the first segment: row %+v lease %+v", m, m.Lease)
	}
	invoke(t, e, tw, "second", next[0])
	if sent := q.take(); len(sent) != 0 {
		t.Fatalf("handed off without progress: %+v", sent)
	}
	if m := e.get("mn"); m.Status != domain.StatusFailed || m.LastJob.FailureSummary != "The trace ran out of time after 0 of 300 frames. Start it again, or trace fewer frames." {
		t.Fatalf("row %+v job %+v", m, m.LastJob)
	}
	if n := succeeded[domain.BeginTrace](tw.movies); n != 1 {
		t.Fatalf("%d BeginTrace: the continuation must not plan or clear again", n)
	}
}

// TestQueuedPastItsLeaseStillRuns (issue 12, item 3): a job whose message
// waited in the queue longer than its lease is claimed and traced (nobody
// replaced its lease), instead of being dropped as stale.
func TestQueuedPastItsLeaseStillRuns(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("mq", 300)
	job := e.start("mq", alice, 0, e.now(), lease)
	e.fake.Step(2 * lease)
	if v := e.get("mq").View(e.now()); v.Status != domain.StatusFailed {
		t.Fatalf("the stale queued job reads as %+v", v)
	}
	tw := e.newWorker(tracer.NewSynthetic(), lease)
	if out := tw.Run(context.Background(), job); out.Result != worker.ResultTraced {
		t.Fatalf("%+v", out)
	}
	if m := e.get("mq"); m.Status != domain.StatusTraced || m.LastJob.JobID != job.JobID {
		t.Fatalf("row %+v", m)
	}
}

// TestContinuationSendFailureFailsTheJobVisibly (issue 12): a hand-off whose
// continuation cannot be sent (SQS keeps failing) is retried with backoff
// while the invocation has time, then the worker claims the next segment
// itself and fails the job at once with a safe summary, keeping its frames;
// nothing is left for the sweeper to find 15 minutes later. A message that
// got through after all is then a no-op.
func TestContinuationSendFailureFailsTheJobVisibly(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("mf", 300)
	job := e.start("mf", alice, 0, e.now(), lease)
	q := &memQueue{fail: errors.New("503")}
	tw := e.newWorker(budgetTracer(e, 100), lease, segmentOptions(q))
	ctx, cancel := context.WithDeadline(context.Background(), e.now().Add(10*time.Second))
	defer cancel()
	out := tw.Run(ctx, job)
	want := worker.ContinuationFailedSummary(100, 300)
	if out.Result != worker.ResultFailed || out.Summary != want {
		t.Fatalf("%+v", out)
	}
	if q.attempts < 2 {
		t.Fatalf("%d sends: the continuation was not retried", q.attempts)
	}
	m := e.get("mf")
	if m.Lease != nil || m.Status != domain.StatusFailed || m.LastJob.JobID != job.JobID || m.LastJob.FailureSummary != want ||
		m.LastJob.Frames != 100 || m.CleanBefore != 100 {
		t.Fatalf("row %+v job %+v", m, m.LastJob)
	}
	if got := domain.SanitizeSummary(want); got != want {
		t.Fatalf("the summary is not safe as is: %q", got)
	}
	// The continuation did get through after all: a no-op.
	late := job
	late.Segment = 1
	if o := e.newWorker(tracer.NewSynthetic(), lease).Run(context.Background(), late); o.Result != worker.ResultNotClaimed {
		t.Fatalf("a late continuation ran: %+v", o)
	}
	plan := domain.PlanTrace(m, domain.Lease{})
	plan.Frames = 100
	checkJobFrames(t, e.stored("mf"), job.JobID, plan)
}

// TestContinuationSendIsRetried: two failed sends, then one that works: the
// job is handed off as usual and its continuation completes it.
func TestContinuationSendIsRetried(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("mt", 300)
	job := e.start("mt", alice, 0, e.now(), lease)
	q := &memQueue{fail: errors.New("503"), failTimes: 2}
	tw := e.newWorker(budgetTracer(e, 100), lease, segmentOptions(q))
	if out := runWithDeadline(e, tw, job); out.Result != worker.ResultHandedOff {
		t.Fatalf("%+v", out)
	}
	next := q.take()
	if len(next) != 1 || next[0].Segment != 1 || q.attempts != 3 {
		t.Fatalf("continuations %+v after %d sends", next, q.attempts)
	}
	if out := e.newWorker(tracer.NewSynthetic(), lease).Run(context.Background(), next[0]); out.Result != worker.ResultTraced {
		t.Fatalf("%+v", out)
	}
}

// runWithDeadline runs one job message in an invocation that ends 10 s of
// the fake clock away.
func runWithDeadline(e *env, tw *testWorker, job events.TraceJob) worker.Outcome {
	ctx, cancel := context.WithDeadline(context.Background(), e.now().Add(10*time.Second))
	defer cancel()
	return tw.Run(ctx, job)
}

// TestRetraceAfterFailureResumesFromTheCheckpoint (issue 12, item 4): a job
// that handed off twice (checkpoints at 60 and 120) and then failed leaves
// its first 120 frames clean; the user's retrace "from 200" with unchanged
// settings resumes at the checkpoint 120, not at frame 0, and keeps them.
func TestRetraceAfterFailureResumesFromTheCheckpoint(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("mr", 300)
	job := e.start("mr", alice, 0, e.now(), lease)
	q := &memQueue{}
	budget := budgetTracer(e, 60)
	calls := 0
	failing := tracer.Func(func(ctx context.Context, m domain.Movie, p domain.TracePlan, emit func(domain.Frame) error) error {
		calls++
		if calls == 3 {
			return tracer.Safe("The tracer lost the markers.", errors.New("injected"))
		}
		return budget.Trace(ctx, m, p, emit)
	})
	tw := e.newWorker(failing, lease, segmentOptions(q))
	for msgs := []events.TraceJob{job}; len(msgs) > 0; msgs = q.take() {
		invoke(t, e, tw, fmt.Sprint("seg-", msgs[0].Segment), msgs[0])
	}
	m := e.get("mr")
	if m.Status != domain.StatusFailed || m.CleanBefore != 120 || m.LastJob.FailureSummary != "The tracer lost the markers." {
		t.Fatalf("row %+v job %+v", m, m.LastJob)
	}
	retrace := e.start("mr", alice, 200, e.now(), lease)
	wr := e.newWorker(tracer.NewSynthetic(), lease)
	if out := wr.Run(context.Background(), retrace); out.Result != worker.ResultTraced || out.FramesWritten != 180 {
		t.Fatalf("%+v", out)
	}
	if p := planOf(t, wr); p.From != 120 || p.ClearFrom != 120 {
		t.Fatalf("the retrace planned %+v, want to resume at 120", p)
	}
	for _, f := range e.stored("mr") {
		if (f.Index < 120 && f.JobID != job.JobID) || (f.Index >= 120 && f.JobID != retrace.JobID) {
			t.Fatalf("frame %d of %s", f.Index, f.JobID)
		}
	}
	if n := len(e.stored("mr")); n != 300 {
		t.Fatalf("%d frames", n)
	}
}

// TestHandOffOutlivesTheInvocationsContext (issue 20 item 7): the stop
// margin stops the tracer and the invocation's own context ends while the
// segment's last writes are still to be made (its deadline overrun by a
// loaded machine). The flush, the hand-off and the continuation run on a
// detached context: the job is handed on, not abandoned. Deterministic: the
// fake clock passes the stop margin and the test ends the context itself.
func TestHandOffOutlivesTheInvocationsContext(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("mo", 300)
	job := e.start("mo", alice, 0, e.now(), lease)
	q := &memQueue{}
	ctx, cancel := context.WithDeadline(context.Background(), e.now().Add(10*time.Second))
	defer cancel()
	synth := tracer.NewSynthetic()
	tr := tracer.Func(func(tctx context.Context, m domain.Movie, p domain.TracePlan, emit func(domain.Frame) error) error {
		n := 0
		return synth.Trace(tctx, m, p, func(f domain.Frame) error {
			if n == 100 {
				e.fake.Step(8 * time.Second) // past the stop margin
				<-tctx.Done()
				cancel() // and the invocation's context ends as well
				return tctx.Err()
			}
			n++
			return emit(f)
		})
	})
	out := e.newWorker(tr, lease, segmentOptions(q)).Run(ctx, job)
	if out.Result != worker.ResultHandedOff || out.FramesWritten != 100 {
		t.Fatalf("outcome %+v, want handed off after 100 frames", out)
	}
	next := q.take()
	if len(next) != 1 || next[0].Segment != 1 || next[0].JobID != job.JobID {
		t.Fatalf("continuation %+v", next)
	}
	m := e.get("mo")
	if m.Status != domain.StatusTracing || m.Lease == nil || m.Lease.Claimed || m.Progress.FramesWritten != 100 {
		t.Fatalf("row after the hand-off: %s, lease %+v, progress %+v", m.Status, m.Lease, m.Progress)
	}
}

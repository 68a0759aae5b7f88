package worker_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

// The tests in this file drive the worker's logic on the in-memory store
// and a fake clock: lease expiry, cadence and deadlines are exact steps of
// the clock, never real waits.

// waitUntil polls cond for up to 10 s of real time (a bound, not a timed
// assertion) and reports whether it held; for tracer goroutines, which must
// not call t.Fatal.
func waitUntil(cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

var errTimedOut = errors.New("test tracer timed out waiting")

// at wraps the synthetic tracer: then runs instead of emitting frame n.
func at(n int, then func(ctx context.Context, f domain.Frame, emit func(domain.Frame) error) error) tracer.Tracer {
	synth := tracer.NewSynthetic()
	return tracer.Func(func(ctx context.Context, m domain.Movie, p domain.TracePlan, emit func(domain.Frame) error) error {
		return synth.Trace(ctx, m, p, func(f domain.Frame) error {
			if f.Index == n {
				return then(ctx, f, emit)
			}
			return emit(f)
		})
	})
}

// TestCrashedWorkerLeavesStaleLeaseThenRetraceCleansUp: a worker "crashes"
// at frame 220 (its invocation's context is cancelled: no terminal write is
// possible). Its lease goes stale exactly at its expiry, readers see the
// trace as stalled, and a new trace from a later frame still retraces every
// frame of the dead job: none of it remains at or after its from-frame.
func TestCrashedWorkerLeavesStaleLeaseThenRetraceCleansUp(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("m3", 300)
	const short = 6 * time.Second
	ctx := context.Background()

	job0 := e.start("m3", alice, 0, e.now(), short)
	if out := e.newWorker(tracer.NewSynthetic(), short).Run(ctx, job0); out.Result != worker.ResultTraced {
		t.Fatalf("first trace: %+v", out)
	}

	jobA := e.start("m3", alice, 100, e.now(), short)
	crashCtx, crash := context.WithCancel(ctx)
	defer crash()
	var wA *testWorker
	wA = e.newWorker(at(220, func(_ context.Context, f domain.Frame, emit func(domain.Frame) error) error {
		// Crash once the first frames are durable, so that there is
		// something of this job to clean up.
		if !waitUntil(func() bool { return wA.putsWritten() > 0 }) {
			return errTimedOut
		}
		crash()
		return emit(f)
	}), short)
	if out := wA.Run(crashCtx, jobA); out.Result != worker.ResultStranded {
		t.Fatalf("crashed worker: %+v", out)
	}
	m := e.get("m3")
	if m.Status != domain.StatusTracing || m.Lease == nil || m.Lease.ID != jobA.JobID || !m.Lease.Claimed || m.CleanBefore != 100 {
		t.Fatalf("row after the crash: %+v", m)
	}
	ofA := 0
	for _, f := range e.stored("m3") {
		if f.JobID == jobA.JobID {
			ofA++
		}
	}
	if ofA != 99 {
		t.Fatalf("the crashed job left %d frames, want its first transaction's 99", ofA)
	}

	// One tick before its expiry the lease is live; at its expiry it is stale:
	// shown as stalled, and replaced by the next trace request.
	e.fake.SetTime(m.Lease.ExpiresAt.Add(-time.Millisecond))
	if v := m.View(e.now()); v.Status != domain.StatusTracing {
		t.Fatalf("live trace shown as %+v", v)
	}
	e.fake.SetTime(m.Lease.ExpiresAt)
	if v := m.View(e.now()); v.Status != domain.StatusFailed || v.LastJob.FailureSummary != domain.StalledSummary {
		t.Fatalf("stale trace shown as %+v", v)
	}
	jobB := e.start("m3", bob, 200, e.now(), short)
	wB := e.newWorker(tracer.NewSynthetic(), short)
	if out := wB.Run(ctx, jobB); out.Result != worker.ResultTraced {
		t.Fatalf("retrace: %+v", out)
	}
	plan := planOf(t, wB)
	if plan.ClearFrom != 100 || plan.From != 100 {
		t.Fatalf("the retrace from 200 must start at the dead job's 100: %+v", plan)
	}
	for _, f := range e.stored("m3") {
		switch {
		case f.JobID == jobA.JobID:
			t.Fatalf("frame %d of the dead job remains", f.Index)
		case f.Index < 100 && f.JobID != job0.JobID, f.Index >= 100 && f.JobID != jobB.JobID:
			t.Fatalf("frame %d belongs to %s", f.Index, f.JobID)
		}
	}
	if n := len(e.stored("m3")); n != 300 {
		t.Fatalf("%d frames stored", n)
	}
}

// TestLostLeaseStopsAtOnce: someone else ends the job (here: a terminal
// write with the job's own lease, as a duplicate worker would make) while
// the worker runs; its next write is refused and it makes no other.
func TestLostLeaseStopsAtOnce(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("m5", 300)
	job := e.start("m5", alice, 0, e.now(), lease)
	var tw *testWorker
	tw = e.newWorker(at(150, func(ctx context.Context, f domain.Frame, emit func(domain.Frame) error) error {
		if !waitUntil(func() bool { return tw.putsWritten() >= 99 }) { // the first batch is durable
			return errTimedOut
		}
		m := e.get("m5")
		if _, err := e.store.Commit(ctx, "m5", domain.FailJob{Job: *m.Lease, Now: e.now(), Summary: "Stopped by an operator."}); err != nil {
			return err
		}
		return emit(f)
	}), lease)
	out := tw.Run(context.Background(), job)
	if out.Result != worker.ResultLeaseLost || out.FramesWritten != 99 {
		t.Fatalf("%+v", out)
	}
	requireStoppedAtFirstRefusal(t, tw.allCalls())
	if m := e.get("m5"); m.LastJob.FailureSummary != "Stopped by an operator." {
		t.Fatalf("the worker overwrote the outcome: %+v", m.LastJob)
	}
}

// TestRefusedRenewalStopsAtOnce: the job's lease is ended by someone else
// while no frame is buffered, so the next renewal is the first write to
// learn it: the refusal stops the job at once (no further frame write), as
// a refused frame write does; it is no transport error to carry on after.
func TestRefusedRenewalStopsAtOnce(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("m5r", 300)
	const short = 6 * time.Second // cadence 2 s
	job := e.start("m5r", alice, 0, e.now(), short)
	var tw *testWorker
	tw = e.newWorker(at(99, func(ctx context.Context, f domain.Frame, emit func(domain.Frame) error) error {
		if !waitUntil(func() bool { return tw.putsWritten() == 99 }) { // frames 0-98 durable, none buffered
			return errTimedOut
		}
		m := e.get("m5r")
		if _, err := e.store.Commit(ctx, "m5r", domain.FailJob{Job: *m.Lease, Now: e.now(), Summary: "Stopped by an operator."}); err != nil {
			return err
		}
		e.fake.Step(short / 3)
		renewed := func() bool {
			for _, c := range tw.movies.snapshot() {
				if _, ok := c.cmd.(domain.RenewJob); ok {
					return true
				}
			}
			return false
		}
		if !waitUntil(renewed) {
			return errTimedOut
		}
		return emit(f)
	}), short)
	out := tw.Run(context.Background(), job)
	if out.Result != worker.ResultLeaseLost || out.FramesWritten != 99 {
		t.Fatalf("%+v", out)
	}
	if refused := requireStoppedAtFirstRefusal(t, tw.allCalls()); refused.what != "domain.RenewJob" {
		t.Fatalf("the first refusal was %s, want the renewal", refused.what)
	}
}

// TestRenewalCadence: the lease is renewed on a time cadence (a third of the
// lease), never per frame, and each renewal publishes the durable progress.
// The tracer steps the fake clock by one cadence five times: exactly five
// renewals, and the job outlives its lease more than once over.
func TestRenewalCadence(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("m6", 300)
	const short = 6 * time.Second // cadence 2 s
	job := e.start("m6", alice, 0, e.now(), short)
	start := e.now()
	var tw *testWorker
	steps := 0
	synth := tracer.NewSynthetic()
	tw = e.newWorker(tracer.Func(func(ctx context.Context, m domain.Movie, p domain.TracePlan, emit func(domain.Frame) error) error {
		return synth.Trace(ctx, m, p, func(f domain.Frame) error {
			if f.Index > 0 && f.Index%50 == 0 {
				steps++
				e.fake.Step(short / 3)
				if !waitUntil(func() bool { return succeeded[domain.RenewJob](tw.movies) == steps }) {
					return errTimedOut
				}
			}
			return emit(f)
		})
	}), short)
	if out := tw.Run(context.Background(), job); out.Result != worker.ResultTraced {
		t.Fatalf("%+v\n%s", out, e.logs.String())
	}
	if renewals := succeeded[domain.RenewJob](tw.movies); renewals != 5 || steps != 5 {
		t.Fatalf("%d renewals in %d cadence steps", renewals, steps)
	}
	if took := e.now().Sub(start); took <= short {
		t.Fatalf("the job took %v of the clock, not more than a lease: the test proves nothing", took)
	}
	last, midway := -1, false
	for _, c := range tw.movies.snapshot() {
		if c.err != nil {
			t.Fatalf("%T refused: %v", c.cmd, c.err)
		}
		if r, ok := c.cmd.(domain.RenewJob); ok {
			if r.FramesWritten < last || c.row.Progress.FramesWritten != r.FramesWritten || c.row.Progress.TotalFrames != 300 ||
				c.row.Lease.ExpiresAt != r.Now.Add(short) {
				t.Fatalf("renewal %+v on row %+v after %d", r, c.row.Progress, last)
			}
			last = r.FramesWritten
			midway = midway || (r.FramesWritten > 0 && r.FramesWritten < 300)
		}
	}
	if !midway {
		t.Fatal("no renewal published partial progress")
	}
}

// TestRenewalTransportErrorDoesNotStopTheJob: a renewal that fails in
// transport is logged and the job goes on (the lease may still be live).
func TestRenewalTransportErrorDoesNotStopTheJob(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("m6b", 300)
	const short = 6 * time.Second
	job := e.start("m6b", alice, 0, e.now(), short)
	var tw *testWorker
	tw = e.newWorker(at(100, func(_ context.Context, f domain.Frame, emit func(domain.Frame) error) error {
		e.fake.Step(short / 3)
		if !waitUntil(func() bool { return len(tw.movies.snapshot()) == 3 }) { // claim, begin, the failed renewal
			return errTimedOut
		}
		return emit(f)
	}), short)
	tw.movies.fail = func(cmd domain.Command) error {
		if _, ok := cmd.(domain.RenewJob); ok {
			return errors.New("connection reset by peer")
		}
		return nil
	}
	if out := tw.Run(context.Background(), job); out.Result != worker.ResultTraced || out.FramesWritten != 300 {
		t.Fatalf("%+v", out)
	}
	if n := countLogs(e, "lease renewal failed; continuing while the lease lasts"); n != 1 {
		t.Fatalf("%d renewal warnings", n)
	}
}

// TestDeadlines: with less than StartReserve left a job is not claimed; a
// claimed job stops StopMargin before the deadline, by the clock, and
// publishes "ran out of time" with the durable progress.
func TestDeadlines(t *testing.T) {
	t.Run("too late to start", func(t *testing.T) {
		e := newMemEnv(t)
		e.createMovie("m9a", 300)
		job := e.start("m9a", alice, 0, e.now(), lease)
		tw := e.newWorker(tracer.NewSynthetic(), lease, func(o *worker.Options) { o.StopMargin, o.StartReserve = 2*time.Second, 4*time.Second })
		ctx, cancel := context.WithDeadline(context.Background(), e.now().Add(4*time.Second-time.Nanosecond))
		defer cancel()
		if out := tw.Run(ctx, job); out.Result != worker.ResultDeferred || !out.Redeliver() {
			t.Fatalf("%+v", out)
		}
		if m := e.get("m9a"); m.Lease.Claimed || len(tw.movies.snapshot()) != 0 {
			t.Fatalf("an unstarted job touched the row: %+v", m.Lease)
		}
	})
	t.Run("runs out of time", func(t *testing.T) {
		e := newMemEnv(t)
		e.createMovie("m9b", 300)
		job := e.start("m9b", alice, 0, e.now(), lease)
		tw := e.newWorker(at(150, func(ctx context.Context, f domain.Frame, emit func(domain.Frame) error) error {
			e.fake.Step(8 * time.Second) // to the deadline less the stop margin
			<-ctx.Done()
			return ctx.Err()
		}), lease, func(o *worker.Options) { o.StopMargin, o.StartReserve = 2*time.Second, 4*time.Second })
		ctx, cancel := context.WithDeadline(context.Background(), e.now().Add(10*time.Second))
		defer cancel()
		out := tw.Run(ctx, job)
		// The 150 frames emitted before the stop are all kept.
		const want = "The trace ran out of time after 150 of 300 frames. Start it again, or trace fewer frames."
		if out.Result != worker.ResultFailed || out.Summary != want {
			t.Fatalf("%+v", out)
		}
		if m := e.get("m9b"); m.Status != domain.StatusFailed || m.LastJob.FailureSummary != want || m.Lease != nil {
			t.Fatalf("row %+v", m)
		}
	})
	t.Run("runs out of time one frame short", func(t *testing.T) {
		// 299 of 300 frames durable at the stop margin, no queue to hand off
		// to: the job is not done, so it is no "traced".
		e := newMemEnv(t)
		e.createMovie("m9c", 300)
		job := e.start("m9c", alice, 0, e.now(), lease)
		tw := e.newWorker(at(299, func(ctx context.Context, f domain.Frame, emit func(domain.Frame) error) error {
			e.fake.Step(8 * time.Second)
			<-ctx.Done()
			return ctx.Err()
		}), lease, func(o *worker.Options) { o.StopMargin, o.StartReserve = 2*time.Second, 4*time.Second })
		ctx, cancel := context.WithDeadline(context.Background(), e.now().Add(10*time.Second))
		defer cancel()
		out := tw.Run(ctx, job)
		const want = "The trace ran out of time after 299 of 300 frames. Start it again, or trace fewer frames."
		if out.Result != worker.ResultFailed || out.Summary != want || out.FramesWritten != 299 {
			t.Fatalf("%+v", out)
		}
		if m := e.get("m9c"); m.Status != domain.StatusFailed || m.CleanBefore != 0 {
			t.Fatalf("row %+v", m)
		}
	})
}

// TestBatchJobsRunConcurrently (issue 12, item 3): two jobs in one batch
// run at the same time, so neither waits in the invocation while its lease
// runs out. Each tracer waits for the other to have started: one after the
// other, the first would wait in vain.
func TestBatchJobsRunConcurrently(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("mc1", 300)
	e.createMovie("mc2", 300)
	j1, j2 := e.start("mc1", alice, 0, e.now(), lease), e.start("mc2", bob, 0, e.now(), lease)
	var started atomic.Int32
	synth := tracer.NewSynthetic()
	tw := e.newWorker(tracer.Func(func(ctx context.Context, m domain.Movie, p domain.TracePlan, emit func(domain.Frame) error) error {
		started.Add(1)
		if !waitUntil(func() bool { return started.Load() == 2 }) {
			return errTimedOut
		}
		return synth.Trace(ctx, m, p, emit)
	}), lease)
	resp, err := tw.Handle(context.Background(), events.SQSEvent{Records: []lambdaMessage{message(t, "a", j1), message(t, "b", j2)}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v %v", resp, err)
	}
	for _, id := range []string{"mc1", "mc2"} {
		if m := e.get(id); m.Status != domain.StatusTraced {
			t.Fatalf("%s: %+v %+v", id, m, m.LastJob)
		}
	}
}

// TestTerminalWriteIsRetried (issue 12, item 5): a terminal write that
// fails (not refused) is retried with backoff while the fence holds by the
// worker's clock; once the lease has expired by that clock it stops.
func TestTerminalWriteIsRetried(t *testing.T) {
	transport := errors.New("503 Service Unavailable")
	t.Run("transient", func(t *testing.T) {
		e := newMemEnv(t)
		e.createMovie("mt1", 300)
		job := e.start("mt1", alice, 0, e.now(), lease)
		tw := e.newWorker(tracer.NewSynthetic(), lease)
		fails := 0
		tw.movies.fail = func(cmd domain.Command) error {
			if _, ok := cmd.(domain.CompleteJob); ok && fails < 2 {
				fails++
				return transport
			}
			return nil
		}
		if out := tw.Run(context.Background(), job); out.Result != worker.ResultTraced {
			t.Fatalf("%+v", out)
		}
		if n := succeeded[domain.CompleteJob](tw.movies); n != 1 || fails != 2 {
			t.Fatalf("%d completions after %d failures", n, fails)
		}
		if m := e.get("mt1"); m.Status != domain.StatusTraced || m.Lease != nil {
			t.Fatalf("row %+v", m)
		}
	})
	t.Run("until the lease expires", func(t *testing.T) {
		e := newMemEnv(t)
		e.createMovie("mt2", 300)
		job := e.start("mt2", alice, 0, e.now(), lease)
		tw := e.newWorker(tracer.NewSynthetic(), lease)
		attempts := 0
		tw.movies.fail = func(cmd domain.Command) error {
			if _, ok := cmd.(domain.CompleteJob); ok {
				attempts++
				e.fake.Step(time.Minute)
				return transport
			}
			return nil
		}
		out := tw.Run(context.Background(), job)
		if out.Result == worker.ResultTraced || attempts != int(lease/time.Minute) {
			t.Fatalf("%+v after %d attempts", out, attempts)
		}
		if m := e.get("mt2"); m.Status != domain.StatusTracing {
			t.Fatalf("row %+v", m)
		}
	})
}

// TestNewValidatesOptions: missing ports and inconsistent settings are
// refused at construction.
func TestNewValidatesOptions(t *testing.T) {
	s := newMemStore()
	ok := worker.Options{Movies: s, Frames: s, Tracer: tracer.NewSynthetic()}
	if _, err := worker.New(ok); err != nil {
		t.Fatal(err)
	}
	for name, tune := range map[string]func(*worker.Options){
		"no movies":                func(o *worker.Options) { o.Movies = nil },
		"no frames":                func(o *worker.Options) { o.Frames = nil },
		"no tracer":                func(o *worker.Options) { o.Tracer = nil },
		"negative lease":           func(o *worker.Options) { o.LeaseDuration = -time.Second },
		"reserve below margin":     func(o *worker.Options) { o.StopMargin, o.StartReserve = time.Minute, time.Second },
		"negative frame batch":     func(o *worker.Options) { o.FrameBatch = -1 },
		"negative renewal cadence": func(o *worker.Options) { o.RenewEvery = -1 },
	} {
		o := ok
		tune(&o)
		if _, err := worker.New(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The reserve may equal the margin: a job claimed with exactly that much
	// time left stops at once, but is claimed.
	o := ok
	o.StopMargin, o.StartReserve = 5*time.Second, 5*time.Second
	if _, err := worker.New(o); err != nil {
		t.Errorf("reserve equal to the margin refused: %v", err)
	}
}

// TestApplyEnv: the worker's own settings from the environment, and garbage.
func TestApplyEnv(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	var o worker.Options
	if err := o.ApplyEnv(env(map[string]string{worker.EnvStopMargin: "3s", worker.EnvStartReserve: "7s"})); err != nil ||
		o.StopMargin != 3*time.Second || o.StartReserve != 7*time.Second {
		t.Fatalf("%+v %v", o, err)
	}
	for _, bad := range []string{"soon", "-1s", "0", "11m", "1e9", strings.Repeat("9", 40) + "s"} {
		if err := (&worker.Options{}).ApplyEnv(env(map[string]string{worker.EnvStopMargin: bad})); err == nil {
			t.Errorf("%s=%q accepted", worker.EnvStopMargin, bad)
		}
	}
}

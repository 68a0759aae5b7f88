package worker_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

const lease = domain.DefaultLeaseDuration

// claimedRow is the row the worker's successful claim returned.
func (tw *testWorker) claimedRow(tb testing.TB) domain.Movie {
	tb.Helper()
	tw.movies.mu.Lock()
	defer tw.movies.mu.Unlock()
	for _, c := range tw.movies.calls {
		if _, ok := c.cmd.(domain.ClaimJob); ok && c.err == nil {
			return c.row
		}
	}
	tb.Fatal("no successful claim")
	return domain.Movie{}
}

func planOf(tb testing.TB, tw *testWorker) domain.TracePlan {
	tb.Helper()
	m := tw.claimedRow(tb)
	return domain.PlanTrace(m, *m.Lease)
}

func countLogs(e *env, msg string) int {
	n := 0
	for _, rec := range e.logLines() {
		if rec["msg"] == msg {
			n++
		}
	}
	return n
}

// TestRedeliveredMessageIsClaimedOnce: the same SQS message, received three
// times from the emulator (never deleted, so it comes back after the
// visibility timeout), is claimed once and writes one set of frames.
func TestRedeliveredMessageIsClaimedOnce(t *testing.T) {
	e := newEnv(t)
	e.newQueue(time.Second)
	e.createMovie("m1", 300)
	job := e.start("m1", alice, 0, time.Now(), lease)
	id := e.send(job)
	tw := e.newWorker(tracer.NewSynthetic(), lease)
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		msgs := e.receive(1, 10*time.Second)
		if len(msgs) != 1 || msgs[0].MessageId != id || msgs[0].Attributes["ApproximateReceiveCount"] != strconv.Itoa(i) {
			t.Fatalf("delivery %d: %+v", i, msgs)
		}
		resp, err := tw.Handle(ctx, lambdaevents.SQSEvent{Records: msgs})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("delivery %d: %+v %v", i, resp, err)
		}
	}
	if n := succeeded[domain.ClaimJob](tw.movies); n != 1 {
		t.Fatalf("%d claims", n)
	}
	if n := succeeded[domain.CompleteJob](tw.movies); n != 1 {
		t.Fatalf("%d completions", n)
	}
	if n := countLogs(e, "job not claimed: a redelivered, replaced or stale job is a no-op"); n != 2 {
		t.Fatalf("%d no-op deliveries logged", n)
	}
	plan := planOf(t, tw)
	checkJobFrames(t, e.stored("m1"), job.JobID, plan)
	writes := tw.frames.snapshot()
	if len(writes) != 4 { // 300 frames: 99 + 99 + 99 + 3, nothing to clear
		t.Fatalf("%d fenced writes: %+v", len(writes), writes)
	}
	m := e.get("m1")
	if m.Status != domain.StatusTraced || m.Lease != nil || m.LastJob == nil || m.LastJob.JobID != job.JobID ||
		m.Progress != (domain.Progress{FramesWritten: 300, TotalFrames: 300}) || m.CleanBefore != 300 {
		t.Fatalf("row after the trace: %+v", m)
	}
}

// TestConcurrentDuplicatesAreClaimedOnce: three copies of a job delivered to
// three concurrent invocations (SQS's at-least-once duplicates): one claim.
func TestConcurrentDuplicatesAreClaimedOnce(t *testing.T) {
	e := newEnv(t)
	e.newQueue(60 * time.Second)
	e.createMovie("m1", 300)
	job := e.start("m1", alice, 0, time.Now(), lease)
	for range 3 {
		e.send(job)
	}
	msgs := e.receive(3, 10*time.Second)
	if len(msgs) != 3 {
		t.Fatalf("received %d", len(msgs))
	}
	workers := make([]*testWorker, 3)
	var wg sync.WaitGroup
	for i := range msgs {
		workers[i] = e.newWorker(tracer.NewSynthetic(), lease)
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := workers[i].Handle(context.Background(), lambdaevents.SQSEvent{Records: msgs[i : i+1]})
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Errorf("invocation %d: %+v %v", i, resp, err)
			}
		}()
	}
	wg.Wait()
	claims, winner := 0, -1
	for i, w := range workers {
		if n := succeeded[domain.ClaimJob](w.movies); n > 0 {
			claims += n
			winner = i
		}
	}
	if claims != 1 {
		t.Fatalf("%d claims", claims)
	}
	for i, w := range workers {
		if i != winner && len(w.frames.snapshot()) != 0 {
			t.Errorf("worker %d wrote frames without the claim", i)
		}
	}
	checkJobFrames(t, e.stored("m1"), job.JobID, planOf(t, workers[winner]))
}

// TestTakenOverJobWritesNothingAfterTakeover: worker A's clock runs an hour
// slow (a paused or skewed process), so it believes in its lease after the
// row has let it go stale. Bob's trace takes the stale lease over and
// completes; when A carries on, every write it attempts is refused, it
// stops at the first refusal and publishes nothing.
func TestTakenOverJobWritesNothingAfterTakeover(t *testing.T) {
	e := newEnv(t)
	e.createMovie("m2", 300)
	jobA := e.start("m2", alice, 0, time.Now(), lease)
	reached, gate := make(chan struct{}), make(chan struct{})
	synth := tracer.NewSynthetic()
	var wA *testWorker
	trA := tracer.Func(func(ctx context.Context, m domain.Movie, p domain.TracePlan, emit func(domain.Frame) error) error {
		return synth.Trace(ctx, m, p, func(f domain.Frame) error {
			if f.Index == 150 {
				// Hold here once the first transaction (frames 0-98) is durable.
				for deadline := time.Now().Add(10 * time.Second); wA.putsWritten() < 99 && time.Now().Before(deadline); {
					time.Sleep(5 * time.Millisecond)
				}
				close(reached)
				select {
				case <-gate:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return emit(f)
		})
	})
	wA = e.newWorker(trA, lease)
	wA.Now = func() time.Time { return time.Now().Add(-time.Hour) }
	doneA := make(chan worker.Outcome, 1)
	go func() { doneA <- wA.Run(context.Background(), jobA) }()
	select {
	case <-reached:
	case out := <-doneA:
		t.Fatalf("A ended early: %+v", out)
	}
	if len(e.stored("m2")) != 99 {
		t.Fatalf("A should have written its first transaction, stored %d", len(e.stored("m2")))
	}

	// A's claim wrote an expiry an hour in the past: the lease is stale to
	// everyone but A. Bob's trace replaces it.
	jobB := e.start("m2", bob, 0, time.Now(), lease)
	tookOver := time.Now()
	wB := e.newWorker(tracer.NewSynthetic(), lease)
	if out := wB.Run(context.Background(), jobB); out.Result != worker.ResultTraced {
		t.Fatalf("B: %+v", out)
	}
	close(gate)
	outA := <-doneA
	if outA.Result != worker.ResultLeaseLost || outA.FramesWritten != 99 {
		t.Fatalf("A: %+v", outA)
	}

	// Nothing of A landed after the takeover, and A stopped at its first refusal.
	refusals := 0
	for _, w := range wA.frames.snapshot() {
		if w.at.After(tookOver) {
			if w.err == nil {
				t.Errorf("A wrote %d frames after the takeover", w.puts+w.deletes)
			}
			refusals++
		}
	}
	wA.movies.mu.Lock()
	for _, c := range wA.movies.calls {
		if c.at.After(tookOver) {
			t.Errorf("A committed %T after the takeover (err %v)", c.cmd, c.err)
		}
	}
	wA.movies.mu.Unlock()
	if refusals != 1 {
		t.Fatalf("A attempted %d writes after the takeover, want exactly the one refused", refusals)
	}
	requireStoppedAtFirstRefusal(t, wA.allCalls())
	checkJobFrames(t, e.stored("m2"), jobB.JobID, planOf(t, wB))
	m := e.get("m2")
	if m.Status != domain.StatusTraced || m.LastJob.JobID != jobB.JobID || m.LastJob.UserName != bob.Name || m.Lease != nil {
		t.Fatalf("row %+v", m)
	}
}

// TestCrashedWorkerLeavesStaleLeaseThenRetraceCleansUp: a worker "crashes"
// at frame 220 (its invocation's context is cancelled: no terminal write is
// possible). Its lease goes stale, readers see the trace as stalled, and a
// new trace from a later frame still retraces every frame of the dead job:
// none of it remains at or after its from-frame.
func TestCrashedWorkerLeavesStaleLeaseThenRetraceCleansUp(t *testing.T) {
	e := newEnv(t)
	e.createMovie("m3", 300)
	// Long enough that a transaction on a heavily loaded CI machine cannot
	// outlast a renewal period (lease/3); short enough to wait out below.
	const short = 6 * time.Second
	ctx := context.Background()

	job0 := e.start("m3", alice, 0, time.Now(), short)
	if out := e.newWorker(tracer.NewSynthetic(), short).Run(ctx, job0); out.Result != worker.ResultTraced {
		t.Fatalf("first trace: %+v", out)
	}

	jobA := e.start("m3", alice, 100, time.Now(), short)
	crashCtx, crash := context.WithCancel(ctx)
	defer crash()
	synth := tracer.NewSynthetic()
	var wA *testWorker
	trA := tracer.Func(func(ctx context.Context, m domain.Movie, p domain.TracePlan, emit func(domain.Frame) error) error {
		return synth.Trace(ctx, m, p, func(f domain.Frame) error {
			if f.Index == 220 {
				// Crash once the first frames are durable, so that there is
				// something of this job to clean up.
				for deadline := time.Now().Add(5 * time.Second); wA.putsWritten() == 0 && time.Now().Before(deadline); {
					time.Sleep(5 * time.Millisecond)
				}
				crash()
			}
			return emit(f)
		})
	})
	wA = e.newWorker(trA, short)
	if out := wA.Run(crashCtx, jobA); out.Result != worker.ResultAbandoned {
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
	if ofA < 99 {
		t.Fatalf("the crashed job left %d frames: the test proves nothing", ofA)
	}

	// Stale: shown as stalled, and replaced by the next trace request.
	time.Sleep(time.Until(m.Lease.ExpiresAt) + 50*time.Millisecond)
	if v := m.View(time.Now()); v.Status != domain.StatusFailed || v.LastJob.FailureSummary != domain.StalledSummary {
		t.Fatalf("stale trace shown as %+v", v)
	}
	jobB := e.start("m3", bob, 200, time.Now(), short)
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
	e := newEnv(t)
	e.createMovie("m5", 300)
	const short = 10 * time.Second
	job := e.start("m5", alice, 0, time.Now(), short)
	tw := e.newWorker(tracer.NewSynthetic(tracer.WithDelay(5*time.Millisecond)), short)
	done := make(chan worker.Outcome, 1)
	go func() { done <- tw.Run(context.Background(), job) }()
	for succeeded[domain.BeginTrace](tw.movies) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	claimed := tw.claimedRow(t)
	if _, err := e.movies.Commit(context.Background(), "m5", domain.FailJob{Job: *claimed.Lease, Now: time.Now(), Summary: "Stopped by an operator."}); err != nil {
		t.Fatal(err)
	}
	out := <-done
	if out.Result != worker.ResultLeaseLost {
		t.Fatalf("%+v", out)
	}
	requireStoppedAtFirstRefusal(t, tw.allCalls())
	if m := e.get("m5"); m.LastJob.FailureSummary != "Stopped by an operator." {
		t.Fatalf("the worker overwrote the outcome: %+v", m.LastJob)
	}
}

// TestRenewalCadence: a trace that takes more than two lease durations
// stays live because the lease is renewed on a time cadence (a third of the
// lease here), never per frame, and each renewal publishes the progress.
func TestRenewalCadence(t *testing.T) {
	e := newEnv(t)
	e.createMovie("m6", 300)
	// Cadence 2 s: a loaded machine's slow transaction cannot outlast it.
	// 300 frames at 50 ms take 15 s, over two leases.
	const short = 6 * time.Second
	job := e.start("m6", alice, 0, time.Now(), short)
	tw := e.newWorker(tracer.NewSynthetic(tracer.WithDelay(50*time.Millisecond)), short)
	start := time.Now()
	if out := tw.Run(context.Background(), job); out.Result != worker.ResultTraced {
		t.Fatalf("%+v\n%s", out, e.logs.String())
	}
	took := time.Since(start)
	if took < 2*short {
		t.Fatalf("the trace took %v, less than two leases: the test proves nothing", took)
	}
	renewals := succeeded[domain.RenewJob](tw.movies)
	expected := int(took / (short / 3))
	if renewals < expected/2 || renewals > expected+2 {
		t.Fatalf("%d renewals in %v (about %d expected)", renewals, took, expected)
	}
	// Progress only grows, is published on the row, and the row's writes are
	// never a lease apart.
	tw.movies.mu.Lock()
	defer tw.movies.mu.Unlock()
	last, lastAt, midway := -1, time.Time{}, false
	for _, c := range tw.movies.calls {
		if c.err != nil {
			t.Fatalf("%T refused: %v", c.cmd, c.err)
		}
		if !lastAt.IsZero() && c.at.Sub(lastAt) >= short {
			t.Fatalf("%v between lease writes", c.at.Sub(lastAt))
		}
		lastAt = c.at
		if r, ok := c.cmd.(domain.RenewJob); ok {
			if r.FramesWritten < last || c.row.Progress.FramesWritten != r.FramesWritten || c.row.Progress.TotalFrames != 300 {
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

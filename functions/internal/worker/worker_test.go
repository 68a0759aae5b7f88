package worker_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

const lease = domain.DefaultLeaseDuration

// The tests in this file run on DynamoDB Local and the SQS emulator with the
// real clock: SQS redelivery and the fenced TransactWriteItems are what they
// test. The worker's logic runs on the in-memory store in logic_test.go.

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
		resp, err := tw.Handle(ctx, events.SQSEvent{Records: msgs})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("delivery %d: %+v %v", i, resp, err)
		}
	}
	if n := succeeded[domain.ClaimSegment](tw.movies); n != 1 {
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
			resp, err := workers[i].Handle(context.Background(), events.SQSEvent{Records: msgs[i : i+1]})
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Errorf("invocation %d: %+v %v", i, resp, err)
			}
		}()
	}
	wg.Wait()
	claims, winner := 0, -1
	for i, w := range workers {
		if n := succeeded[domain.ClaimSegment](w.movies); n > 0 {
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
				waitFor(t, "the first transaction", func() bool { return wA.putsWritten() >= 99 })
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
	wA = e.newWorker(trA, lease, func(o *worker.Options) { o.Clock = testenv.SkewedClock{Offset: -time.Hour} })
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
	tookOver := e.seq.Add(1)
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
		if w.at > tookOver {
			if w.err == nil {
				t.Errorf("A wrote %d frames after the takeover", w.puts+w.deletes)
			}
			refusals++
		}
	}
	for _, c := range wA.movies.snapshot() {
		if c.at > tookOver {
			t.Errorf("A committed %T after the takeover (err %v)", c.cmd, c.err)
		}
	}
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

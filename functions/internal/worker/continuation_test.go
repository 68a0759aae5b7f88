package worker_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

// deliveredQueue is a Queue whose first send gets through although it
// reports a failure (SQS stored the message, the answer was lost): the
// continuation is delivered at once and its worker claims the next segment,
// as run.go's first step does, before the sender sees the error. Every
// later send fails too.
type deliveredQueue struct {
	memQueue
	store   testStore
	now     func() time.Time
	mu      sync.Mutex
	claimed *domain.Movie // the row after the continuation's claim
	token   string        // the continuation's claim token
}

func (q *deliveredQueue) Continue(ctx context.Context, job events.TraceJob) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.claimed == nil {
		q.token = token.New()
		m, err := q.store.Commit(ctx, job.MovieID, domain.ClaimSegment{
			JobID: job.JobID, Segment: job.Segment, Token: q.token, Now: q.now(), Duration: lease,
		})
		if err != nil {
			return err
		}
		q.claimed = &m
	}
	q.memQueue.mu.Lock()
	q.attempts++
	q.memQueue.mu.Unlock()
	return errors.New("send message: context deadline exceeded (the message was stored)")
}

// TestContinuationDeliveredDespiteSendErrorIsHandedOff (issue 21, mutant
// worker-continuation-delivered): a hand-off whose continuation send
// reported failure although the message got through, and whose next
// segment a continuation worker already claimed, is a hand-off: the worker's
// own claim of that segment (notContinued) finds it claimed and stops
// there. It must not fail the job, take the continuation's lease or be
// counted as stranded; the continuation keeps the job.
func TestContinuationDeliveredDespiteSendErrorIsHandedOff(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("md", 300)
	job := e.start("md", alice, 0, e.now(), lease)
	q := &deliveredQueue{store: e.store, now: e.now}
	tw := e.newWorker(budgetTracer(e, 100), lease, segmentOptions(q))
	out := runWithDeadline(e, tw, job)
	if out.Result != worker.ResultHandedOff || out.FramesWritten != 100 {
		t.Fatalf("outcome %+v, want handed off after 100 frames", out)
	}
	if q.claimed == nil || q.claimed.Lease == nil || q.claimed.Lease.Segment != 1 {
		t.Fatalf("the continuation did not claim segment 1: %+v", q.claimed)
	}
	m := e.get("md")
	if m.Status != domain.StatusTracing || m.Lease == nil || !m.Lease.Claimed || m.Lease.Segment != 1 ||
		m.Lease.ClaimToken != q.token || m.Lease.ID != job.JobID {
		t.Fatalf("the continuation's claim is not the row's lease: %+v lease %+v", m, m.Lease)
	}
	if m.LastJob != nil && m.LastJob.JobID == job.JobID {
		t.Fatalf("the job was ended: %+v", m.LastJob)
	}
	if n := succeeded[domain.FailJob](tw.movies); n != 0 {
		t.Fatalf("%d FailJob for a delivered continuation", n)
	}
	if n := succeeded[domain.ClaimSegment](tw.movies); n != 1 {
		t.Fatalf("%d successful claims by the first worker, want its own segment 0 only", n)
	}
	if m.Progress.FramesWritten != 100 {
		t.Fatalf("progress %+v, want the hand-off's 100 frames", m.Progress)
	}
}

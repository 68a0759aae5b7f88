package worker_test

import (
	"context"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

// retriedClaims commits every ClaimSegment twice and answers the second
// result, as the SDK does when the first attempt committed but its answer
// was lost (the store-level version of this runs through a fault-injecting
// transport in functions/internal/dynamo).
type retriedClaims struct {
	*memStore
	retried int
}

func (s *retriedClaims) Commit(ctx context.Context, movieID string, cmd domain.Command) (domain.Movie, error) {
	if _, ok := cmd.(domain.ClaimSegment); !ok {
		return s.memStore.Commit(ctx, movieID, cmd)
	}
	if _, err := s.memStore.Commit(ctx, movieID, cmd); err != nil {
		return domain.Movie{}, err
	}
	s.retried++
	return s.memStore.Commit(ctx, movieID, cmd)
}

// TestRetriedClaimRunsTheJob: a claim whose answer was lost and that the SDK
// retried is this attempt's own claim, so the job runs to its end (without a
// per-attempt claim token the retry was refused already_claimed and the job
// stalled until its lease went stale).
func TestRetriedClaimRunsTheJob(t *testing.T) {
	e := newMemEnv(t)
	store := &retriedClaims{memStore: e.store.(*memStore)}
	e.store = store
	e.createMovie("m1", 120)
	job := e.start("m1", alice, 0, e.now(), lease)
	if out := e.newWorker(tracer.NewSynthetic(), lease).Run(context.Background(), job); out.Result != worker.ResultTraced {
		t.Fatalf("retried claim: %+v", out)
	}
	if store.retried == 0 {
		t.Fatal("no claim was retried")
	}
	if m := e.get("m1"); m.Status != domain.StatusTraced || m.Lease != nil {
		t.Fatalf("row after the trace: %+v", m)
	}
	// A redelivery of the same message is a new attempt: still a no-op.
	if out := e.newWorker(tracer.NewSynthetic(), lease).Run(context.Background(), job); out.Result != worker.ResultNotClaimed {
		t.Fatalf("redelivery after the trace: %+v", out)
	}
}

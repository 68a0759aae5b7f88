package dynamo_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

var (
	alice = domain.User{ID: "u-alice", Name: "Alice"}
	bob   = domain.User{ID: "u-bob", Name: "Bob"}
	lease = 10 * time.Second
)

func TestMovieLifecycleAgainstDynamoDBLocal(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := context.Background()
	createMovie(t, s, "m1")
	a, b, job := newID(t), newID(t), newID(t)

	m := apply(t, s, "m1", domain.OpenAnalysis{LeaseID: a, User: alice, Now: t0, Duration: lease})
	if m.Lease == nil || m.Lease.ID != a || m.Version != 2 {
		t.Fatalf("after open: %+v", m.Lease)
	}

	t.Run("a second browser is refused with the holder's name and start time", func(t *testing.T) {
		e := refused(t, s, "m1", domain.OpenAnalysis{LeaseID: b, User: bob, Now: t0.Add(time.Second), Duration: lease}, domain.CodeLeaseHeld)
		if e.Holder == nil || e.Holder.UserName != "Alice" || !e.Holder.StartedAt.Equal(t0) {
			t.Fatalf("holder = %+v", e.Holder)
		}
	})
	t.Run("edits need the live analysis lease", func(t *testing.T) {
		refused(t, s, "m1", domain.EditCaptureInterval{LeaseID: b, Now: t0, Interval: 2}, domain.CodeLeaseHeld)
		refused(t, s, "m1", domain.EditTrim{LeaseID: a, Now: t0, Trim: domain.Trim{Start: 0, End: 301}}, domain.CodeInvalid)
		m := apply(t, s, "m1", domain.EditTrim{LeaseID: a, Now: t0, Trim: domain.Trim{Start: 10, End: 200}})
		if m.Settings.Trim != (domain.Trim{Start: 10, End: 200}) {
			t.Fatalf("trim = %+v", m.Settings.Trim)
		}
	})
	t.Run("heartbeat extends; a heartbeat after expiry is lease_lost", func(t *testing.T) {
		m := apply(t, s, "m1", domain.Heartbeat{LeaseID: a, Now: t0.Add(5 * time.Second), Duration: lease})
		if want := t0.Add(15 * time.Second); !m.Lease.ExpiresAt.Equal(want) {
			t.Fatalf("expiresAt = %v, want %v", m.Lease.ExpiresAt, want)
		}
		refused(t, s, "m1", domain.Heartbeat{LeaseID: a, Now: t0.Add(15 * time.Second), Duration: lease}, domain.CodeLeaseLost)
	})

	now := t0.Add(6 * time.Second)
	m = apply(t, s, "m1", domain.StartTrace{LeaseID: a, JobID: job, User: alice, FromFrame: 10, Now: now, Duration: lease})
	if m.Status != domain.StatusTracing || m.Lease.Kind != domain.LeaseTracing || m.Lease.ID != job {
		t.Fatalf("after start: status %s lease %+v", m.Status, m.Lease)
	}

	t.Run("the old page's release leaves the tracing lease in place", func(t *testing.T) {
		released, err := s.Release(ctx, "m1", domain.Release{LeaseID: a, Now: now})
		if err != nil || released {
			t.Fatalf("release = %v, %v", released, err)
		}
		got, err := s.Get(ctx, "m1")
		if err != nil || got.Lease == nil || got.Lease.ID != job {
			t.Fatalf("lease after release: %+v, %v", got.Lease, err)
		}
	})
	t.Run("edits while tracing are refused", func(t *testing.T) {
		refused(t, s, "m1", domain.EditMarkers{LeaseID: a, Now: now, Markers: nil}, domain.CodeTracingInProgress)
	})
	t.Run("a job is claimed exactly once", func(t *testing.T) {
		apply(t, s, "m1", domain.ClaimSegment{JobID: job, Now: now, Duration: lease})
		refused(t, s, "m1", domain.ClaimSegment{JobID: job, Now: now, Duration: lease}, domain.CodeAlreadyClaimed)
	})
	claimed, err := s.Get(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	m = apply(t, s, "m1", domain.CompleteJob{Job: *claimed.Lease, Now: now.Add(time.Second), FramesWritten: 190})
	if m.Status != domain.StatusTraced || m.Lease != nil || m.LastJob == nil || m.LastJob.JobID != job || m.LastJob.UserName != "Alice" {
		t.Fatalf("after complete: %+v lease=%+v last=%+v", m.Status, m.Lease, m.LastJob)
	}
	refused(t, s, "m1", domain.RenewJob{JobFence: domain.JobFence{JobID: job, Now: now.Add(2 * time.Second)}, Duration: lease}, domain.CodeLeaseLost)
}

func TestMissingMovieIsNotFound(t *testing.T) {
	s, _, _ := newStore(t)
	refused(t, s, "nope", domain.OpenAnalysis{LeaseID: newID(t), User: alice, Now: t0, Duration: lease}, domain.CodeNotFound)
	if _, err := s.Get(context.Background(), "nope"); domain.ErrorCode(err) != domain.CodeNotFound {
		t.Fatalf("get: %v", err)
	}
	released, err := s.Release(context.Background(), "nope", domain.Release{LeaseID: newID(t), Now: t0})
	if err != nil || released {
		t.Fatalf("release of a missing movie = %v, %v; want a quiet no-op", released, err)
	}
}

func TestStaleLeaseIsTakenOverByTheNextOpener(t *testing.T) {
	s, _, _ := newStore(t)
	createMovie(t, s, "m1")
	apply(t, s, "m1", domain.OpenAnalysis{LeaseID: newID(t), User: alice, Now: t0, Duration: lease})
	b := newID(t)
	m := apply(t, s, "m1", domain.OpenAnalysis{LeaseID: b, User: bob, Now: t0.Add(lease), Duration: lease})
	if m.Lease.ID != b || m.Lease.UserName != "Bob" {
		t.Fatalf("lease = %+v", m.Lease)
	}
}

// TestConcurrentOpenAnalysisHasOneWinner races 50 browsers on one movie:
// DynamoDB's conditional write lets exactly one through, and every loser
// learns the winner's name and start time from the refusal alone.
func TestConcurrentOpenAnalysisHasOneWinner(t *testing.T) {
	s, _, _ := newStore(t)
	createMovie(t, s, "race")
	const browsers = 50
	type result struct {
		user domain.User
		err  error
	}
	results := make([]result, browsers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range browsers {
		u := domain.User{ID: "u" + string(rune('A'+i%26)) + string(rune('a'+i/26)), Name: "User " + string(rune('A'+i%26)) + string(rune('a'+i/26))}
		id := newID(t)
		wg.Go(func() {
			<-start
			_, err := s.Commit(context.Background(), "race", domain.OpenAnalysis{LeaseID: id, User: u, Now: t0, Duration: lease})
			results[i] = result{u, err}
		})
	}
	close(start)
	wg.Wait()

	var winners []domain.User
	for _, r := range results {
		if r.err == nil {
			winners = append(winners, r.user)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d winners, want exactly 1", len(winners))
	}
	for _, r := range results {
		if r.err == nil {
			continue
		}
		var e *domain.Error
		if !errors.As(r.err, &e) || e.Code != domain.CodeLeaseHeld {
			t.Fatalf("loser %s: %v, want lease_held", r.user.Name, r.err)
		}
		if e.Holder.UserName != winners[0].Name || !e.Holder.StartedAt.Equal(t0) {
			t.Fatalf("loser %s saw holder %+v, want %s since %v", r.user.Name, e.Holder, winners[0].Name, t0)
		}
	}
}

// A duplicate create is a conflict (409 at the API), not invalid input (it
// was CodeInvalid, a 422); the stored movie is untouched.
func TestDuplicateCreateIsAConflict(t *testing.T) {
	s, _, _ := newStore(t)
	first := createMovie(t, s, "dup")
	again := first
	again.Title = "Another"
	err := s.Create(context.Background(), again)
	if e, ok := domain.AsError(err); !ok || e.Code != domain.CodeExists || e.Field != "id" {
		t.Fatalf("duplicate create: %v, want %s", err, domain.CodeExists)
	}
	if m, err := s.Get(context.Background(), "dup"); err != nil || m.Title != first.Title {
		t.Fatalf("stored %+v (%v), want the first movie", m, err)
	}
}

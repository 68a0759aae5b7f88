package sweeper_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/internal/sweeper"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

const (
	lease = domain.DefaultLeaseDuration
	job1  = "0123456789abcdef0123456789abcdef"
	job2  = "fedcba9876543210fedcba9876543210"
	job3  = "00112233445566778899aabbccddeeff"
	open1 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
)

var alice = domain.User{ID: "u-alice", Name: "Alice"}

// TestSweepFinalisesStaleTracesOnDynamoDBLocal: on DynamoDB Local, a sweep
// ends exactly the stale tracing leases nobody took over (a job that never
// left the queue, a job whose worker died), each with its summary and a
// movie.tracing.failed event derived from the row change, and leaves live
// traces, analysis leases and free movies alone. A second sweep does
// nothing.
func TestSweepFinalisesStaleTracesOnDynamoDBLocal(t *testing.T) {
	ddb := testenv.DynamoDB(t)
	store := dynamo.NewMovieStore(ddb, testenv.NewTables(t, ddb).Movies)
	ctx := context.Background()
	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	mk := func(id string, cmds ...domain.Command) domain.Movie {
		t.Helper()
		m, err := domain.NewMovie(id, id, 300, 25, t0)
		if err != nil {
			t.Fatal(err)
		}
		m.Settings.Markers = []domain.Marker{{ID: "tip", X: 0.5, Y: 0.5}}
		if err := store.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
		for _, c := range cmds {
			if m, err = store.Commit(ctx, id, c); err != nil {
				t.Fatalf("%s: %T: %v", id, c, err)
			}
		}
		return m
	}
	queued := mk("queued", domain.StartTrace{JobID: job1, User: alice, Now: t0, Duration: lease})
	died := mk("died", domain.StartTrace{JobID: job2, User: alice, Now: t0, Duration: lease},
		domain.ClaimSegment{JobID: job2, Now: t0, Duration: lease},
		domain.RenewJob{JobFence: domain.JobFence{JobID: job2, Now: t0}, Duration: lease, FramesWritten: 42})
	live := mk("live", domain.StartTrace{JobID: job3, User: alice, Now: time.Now(), Duration: lease})
	mk("editing", domain.OpenAnalysis{LeaseID: open1, User: alice, Now: t0, Duration: lease})
	mk("free")

	logs := &testenv.LogBuffer{}
	s, err := sweeper.New(sweeper.Options{Movies: dynamo.SweepStore{MovieStore: store}, Log: logging.New(logs, slog.LevelInfo)})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Sweep(ctx)
	if err != nil || rep != (sweeper.Report{Movies: 5, Finalized: 2}) {
		t.Fatalf("%+v %v", rep, err)
	}
	for _, c := range []struct {
		before  domain.Movie
		summary string
		frames  int
	}{{queued, domain.QueuedTooLongSummary, 0}, {died, domain.StalledSummary, 42}} {
		after, err := store.Get(ctx, c.before.ID)
		if err != nil {
			t.Fatal(err)
		}
		if after.Status != domain.StatusFailed || after.Lease != nil || after.LastJob.JobID != c.before.Lease.ID ||
			after.LastJob.FailureSummary != c.summary || after.LastJob.Frames != c.frames {
			t.Fatalf("%s after the sweep: %+v %+v", c.before.ID, after, after.LastJob)
		}
		evs := events.Derive(&c.before, &after)
		if len(evs) != 1 || evs[0].Type != events.TracingFailed || evs[0].Summary != c.summary {
			t.Fatalf("%s: events %+v", c.before.ID, evs)
		}
	}
	if m, _ := store.Get(ctx, "live"); m.Version != live.Version {
		t.Fatalf("the live trace was touched: %+v", m)
	}
	if rep, err := s.Sweep(ctx); err != nil || rep.Finalized != 0 || rep.Skipped != 0 {
		t.Fatalf("second sweep %+v %v", rep, err)
	}
}

// fakeMovies serves one listing and refuses or fails commits, for the
// sweeper's own logic.
type fakeMovies struct {
	movies []domain.Movie
	err    error
}

func (f *fakeMovies) List(context.Context) ([]domain.Movie, error) { return f.movies, nil }
func (f *fakeMovies) Commit(context.Context, string, domain.Command) (domain.Movie, error) {
	return domain.Movie{}, f.err
}

// TestSweepCountsRefusalsAndFailures: a row that changed since the listing
// is skipped, a failed write is counted and retried by the next sweep; the
// rule goes by the sweeper's clock, exactly at the expiry.
func TestSweepCountsRefusalsAndFailures(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	m, _ := domain.NewMovie("m", "m", 10, 25, t0)
	m.Lease = &domain.Lease{Kind: domain.LeaseTracing, ID: job1, AcquiredAt: t0, HeartbeatAt: t0, ExpiresAt: t0.Add(lease)}
	clk := testingclock.NewFakeClock(t0.Add(lease - time.Millisecond))
	f := &fakeMovies{movies: []domain.Movie{m}, err: &domain.Error{Code: domain.CodeLeaseLost}}
	s, _ := sweeper.New(sweeper.Options{Movies: f, Clock: clk})
	if rep, _ := s.Sweep(context.Background()); rep != (sweeper.Report{Movies: 1}) {
		t.Fatalf("live lease swept: %+v", rep)
	}
	clk.SetTime(t0.Add(lease))
	if rep, _ := s.Sweep(context.Background()); rep != (sweeper.Report{Movies: 1, Skipped: 1}) {
		t.Fatalf("%+v", rep)
	}
	f.err = context.DeadlineExceeded
	if rep, _ := s.Sweep(context.Background()); rep != (sweeper.Report{Movies: 1, Failed: 1}) {
		t.Fatalf("%+v", rep)
	}
	if _, err := sweeper.New(sweeper.Options{}); err == nil {
		t.Fatal("no store accepted")
	}
}

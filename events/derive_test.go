package events

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

var (
	t0      = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	alice   = domain.User{ID: "u-alice", Name: "Alice"}
	bob     = domain.User{ID: "u-bob", Name: "Bob"}
	lease1  = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	lease2  = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	job1    = "11111111111111111111111111111111"
	job2    = "22222222222222222222222222222222"
	leaseD  = domain.DefaultLeaseDuration
	hostile = "open /home/ci/secrets/db.yaml: password=hunter2 AKIAABCDEFGHIJKLMNOP https://user:pw@example.invalid/x\ngoroutine 1 [running]:\nmain.go:12"
)

// row replays commands on one movie and keeps every (old, new) pair, as
// the stream would carry them.
type step struct{ old, new domain.Movie }

type row struct {
	t     *testing.T
	m     domain.Movie
	steps []step
}

func newRow(t *testing.T) *row {
	t.Helper()
	m, err := domain.NewMovie("movie-1", "Movie", 300, 30, t0)
	if err != nil {
		t.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "m1", X: 0.5, Y: 0.5}}
	return &row{t: t, m: m}
}

func (r *row) do(cmds ...domain.Command) *row {
	r.t.Helper()
	for _, c := range cmds {
		next, err := domain.Execute(&r.m, c)
		if err != nil {
			r.t.Fatalf("%T: %v", c, err)
		}
		r.steps = append(r.steps, step{r.m, next})
		r.m = next
	}
	return r
}

func history(t *testing.T, cmds ...domain.Command) []step {
	t.Helper()
	return newRow(t).do(cmds...).steps
}

func started(job string, u domain.User, at time.Time, from int) domain.StartTrace {
	return domain.StartTrace{JobID: job, User: u, FromFrame: from, Now: at, Duration: leaseD}
}

func TestDeriveLifecycle(t *testing.T) {
	r := newRow(t).do(
		domain.OpenAnalysis{LeaseID: lease1, User: alice, Now: t0, Duration: leaseD},
		domain.Heartbeat{LeaseID: lease1, Now: t0.Add(time.Minute), Duration: leaseD},
		domain.EditCaptureInterval{LeaseID: lease1, Now: t0.Add(2 * time.Minute), Interval: 2},
		domain.StartTrace{LeaseID: lease1, JobID: job1, User: alice, FromFrame: 4, Now: t0.Add(3 * time.Minute), Duration: leaseD},
		domain.ClaimSegment{JobID: job1, Now: t0.Add(4 * time.Minute), Duration: leaseD},
	)
	claimed := *r.m.Lease
	r.do(
		domain.RenewJob{JobFence: domain.JobFence{JobID: job1, Now: t0.Add(5 * time.Minute)}, Duration: leaseD, FramesWritten: 3},
		domain.CompleteJob{Job: claimed, Now: t0.Add(6 * time.Minute), FramesWritten: 148},
	)
	steps := r.steps

	var got []Event
	for i, s := range steps {
		evs := Derive(&s.old, &s.new)
		switch i {
		case 3, 6: // start, complete
			if len(evs) != 1 {
				t.Fatalf("step %d: %d events %+v", i, len(evs), evs)
			}
		default:
			if len(evs) != 0 {
				t.Fatalf("step %d derived %+v", i, evs)
			}
		}
		got = append(got, evs...)
	}
	want := []Event{
		{Type: TracingStarted, MovieID: "movie-1", JobID: job1, UserID: alice.ID, UserName: alice.Name,
			At: t0.Add(3 * time.Minute), FromFrame: 4, Version: steps[3].new.Version, TrimEnd: 300, CaptureInterval: 2,
			// The started event states the planned frames, 0 to 298, not "from 4".
			FirstFrame: 0, LastFrame: 298},
		// Asked to start at 4, the job traced from 0: nothing below 4 was
		// clean (PlanTrace), and the history says what was traced.
		{Type: TracingCompleted, MovieID: "movie-1", JobID: job1, UserID: alice.ID, UserName: alice.Name,
			At: t0.Add(6 * time.Minute), FromFrame: 4, Version: steps[6].new.Version, TrimEnd: 300, CaptureInterval: 2,
			Frames: 148, FirstFrame: 0, LastFrame: 294},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if j := got[0].Job(); j != (TraceJob{MovieID: "movie-1", JobID: job1, FromFrame: 4, Version: steps[3].new.Version}) {
		t.Errorf("job %+v", j)
	}
	assertNoLeaseID(t, got, lease1)
}

func TestDeriveFailureSanitizesSummary(t *testing.T) {
	r := newRow(t).do(
		started(job1, bob, t0, 0),
		domain.ClaimSegment{JobID: job1, Now: t0.Add(time.Second), Duration: leaseD},
	)
	claimed, m := *r.m.Lease, r.m
	failed := domain.FailJob{Job: claimed, Now: t0.Add(time.Minute), FramesWritten: 2, Summary: hostile}
	next := domain.Apply(failed, m)
	// A row written by some other path with an unsanitized summary is
	// sanitized again on the way to the audit table.
	next.LastJob.FailureSummary = hostile
	evs := Derive(&m, &next)
	if len(evs) != 1 || evs[0].Type != TracingFailed || evs[0].JobID != job1 {
		t.Fatalf("got %+v", evs)
	}
	s := evs[0].Summary
	for _, bad := range []string{"/home", "hunter2", "AKIA", "example.invalid", "goroutine", "main.go", "\n"} {
		if strings.Contains(s, bad) {
			t.Errorf("summary %q contains %q", s, bad)
		}
	}
	if s == "" || s != domain.SanitizeSummary(s) {
		t.Errorf("summary %q is not a sanitized fixed point", s)
	}
}

func TestDeriveStaleTakeover(t *testing.T) {
	// Job 1 starts and is never claimed; 20 minutes later its lease is stale
	// and Bob's trace replaces it: job 1 is abandoned, job 2 started.
	steps := history(t,
		started(job1, alice, t0, 0),
		started(job2, bob, t0.Add(20*time.Minute), 0),
	)
	evs := Derive(&steps[1].old, &steps[1].new)
	if len(evs) != 2 {
		t.Fatalf("got %+v", evs)
	}
	ab, st := evs[0], evs[1]
	// Job 1 was never claimed: the takeover recorded it on the row as
	// failed, queued too long (issue 12 item 10), and the event says so.
	if j := steps[1].new.LastJob; j == nil || j.JobID != job1 || j.Status != domain.StatusFailed {
		t.Errorf("the row's last job after the takeover is %+v, want job 1 failed", j)
	}
	if ab.Type != TracingAbandoned || ab.JobID != job1 || ab.UserName != alice.Name || !ab.At.Equal(t0.Add(leaseD)) ||
		ab.Summary != domain.QueuedTooLongSummary {
		t.Errorf("abandoned %+v", ab)
	}
	if st.Type != TracingStarted || st.JobID != job2 || st.UserName != bob.Name || !st.At.Equal(t0.Add(20*time.Minute)) {
		t.Errorf("started %+v", st)
	}

	// A stale tracing lease replaced by an analysis lease: the row records
	// job 1 as failed (status tracing_failed), and the change derives exactly
	// one event, abandoned, and the analysis lease ID appears nowhere.
	steps = history(t,
		started(job1, alice, t0, 0),
		domain.OpenAnalysis{LeaseID: lease2, User: bob, Now: t0.Add(30 * time.Minute), Duration: leaseD},
		domain.Heartbeat{LeaseID: lease2, Now: t0.Add(31 * time.Minute), Duration: leaseD},
	)
	if m := steps[1].new; m.Status != domain.StatusFailed || m.LastJob == nil || m.LastJob.JobID != job1 {
		t.Errorf("after the takeover the row is %s with last job %+v, want tracing_failed with job 1", m.Status, m.LastJob)
	}
	evs = Derive(&steps[1].old, &steps[1].new)
	if len(evs) != 1 || evs[0].Type != TracingAbandoned || evs[0].JobID != job1 || evs[0].Summary != domain.QueuedTooLongSummary {
		t.Fatalf("got %+v", evs)
	}
	if evs := Derive(&steps[2].old, &steps[2].new); len(evs) != 0 {
		t.Fatalf("heartbeat after takeover derived %+v", evs)
	}
	assertNoLeaseID(t, evs, lease2)
}

func TestDeriveReplayAndEdgeCases(t *testing.T) {
	steps := history(t, started(job1, alice, t0, 0))
	a, b := Derive(&steps[0].old, &steps[0].new), Derive(&steps[0].old, &steps[0].new)
	if len(a) != 1 || a[0] != b[0] {
		t.Fatalf("not deterministic: %+v %+v", a, b)
	}
	if evs := Derive(&steps[0].new, nil); evs != nil {
		t.Errorf("remove derived %+v", evs)
	}
	if evs := Derive(nil, &steps[0].new); len(evs) != 1 || evs[0].Type != TracingStarted {
		t.Errorf("insert of a tracing row derived %+v", evs)
	}
	// The same image twice (a no-op change) derives nothing.
	if evs := Derive(&steps[0].new, &steps[0].new); len(evs) != 0 {
		t.Errorf("no-op derived %+v", evs)
	}
	// A tracing lease on a row whose status is not tracing starts nothing:
	// "started" is a new tracing lease with status tracing, the condition
	// the stream filter passes records on (infra/stack/filters.go).
	odd := steps[0].new
	odd.Status = domain.StatusReady
	if evs := Derive(&steps[0].old, &odd); len(evs) != 0 {
		t.Errorf("a tracing lease without status tracing derived %+v", evs)
	}
}

func assertNoLeaseID(t *testing.T, v any, ids ...string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if strings.Contains(string(b), id) {
			t.Fatalf("lease ID %s leaked into %s", id, b)
		}
	}
}

func TestDeriveCancelled(t *testing.T) {
	r := newRow(t).do(
		started(job1, alice, t0, 0),
		domain.ClaimSegment{JobID: job1, Now: t0.Add(time.Second), Duration: leaseD},
	)
	m := r.m
	next, err := domain.Execute(&m, domain.CancelTrace{Job: *m.Lease, User: alice, Now: t0.Add(time.Minute), FramesWritten: 7})
	if err != nil {
		t.Fatal(err)
	}
	evs := Derive(&m, &next)
	if len(evs) != 1 || evs[0].Type != TracingCancelled || evs[0].JobID != job1 || evs[0].UserName != alice.Name ||
		!evs[0].At.Equal(t0.Add(time.Minute)) || evs[0].Frames != 7 || evs[0].Summary != "" {
		t.Fatalf("a cancel derived %+v, want one cancelled event (and no abandoned one)", evs)
	}
	if string(evs[0].Type) != "movie.tracing.cancelled" || evs[0].AuditKey() != job1+"#movie.tracing.cancelled" {
		t.Fatalf("audit key of %+v: %q", evs[0], evs[0].AuditKey())
	}
}

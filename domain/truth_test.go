package domain_test

import (
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// A partial retrace from frame 300 of a 600-frame movie traced before
// writes 300 frames and keeps 300: the movie stores 600 (issue 25: the list
// said "300 traced frames over the 600 frames").
func TestTracedFramesCountsKeptAndWritten(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	alice := domain.User{ID: "u-alice", Name: "Alice"}
	const job = "11111111111111111111111111111111"
	m, err := domain.NewMovie("m1", "Movie", 600, 25, now)
	if err != nil {
		t.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "a", X: 0.5, Y: 0.5}}
	m.CleanBefore, m.KeptFrames, m.Progress.FramesWritten = 600, 0, 600 // a completed first trace
	if got := m.TracedFrames(); got != 600 {
		t.Fatalf("after the first trace: %d", got)
	}
	step := func(c domain.Command) {
		t.Helper()
		next, err := domain.Execute(&m, c)
		if err != nil {
			t.Fatalf("%T: %v", c, err)
		}
		m = next
	}
	step(domain.StartTrace{JobID: job, User: alice, Now: now, Duration: time.Minute, FromFrame: 300})
	step(domain.ClaimSegment{JobID: job, Now: now, Duration: time.Minute})
	p := domain.PlanTrace(m, *m.Lease)
	if p.Kept != 300 || p.Frames != 300 {
		t.Fatalf("plan %+v", p)
	}
	fence := domain.JobFence{JobID: job, Now: now.Add(time.Second)}
	step(domain.BeginTrace{JobFence: fence, Duration: time.Minute, CleanBefore: p.ClearFrom, TotalFrames: p.Frames, PlanFrom: p.From, Kept: p.Kept})
	if got := m.TracedFrames(); got != 300 {
		t.Fatalf("after BeginTrace (frames from 300 cleared): %d, want 300", got)
	}
	step(domain.CompleteJob{Job: *m.Lease, Now: now.Add(2 * time.Second), FramesWritten: 300})
	if got := m.TracedFrames(); got != 600 || m.LastJob.Frames != 300 {
		t.Fatalf("after the retrace: %d traced, job %d frames; want 600 and 300", got, m.LastJob.Frames)
	}
}

// A cancel records the progress last published; SettleCancel records what
// the job really wrote, once, and only for that cancelled job.
func TestSettleCancel(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	alice := domain.User{ID: "u-alice", Name: "Alice"}
	const job, other = "11111111111111111111111111111111", "22222222222222222222222222222222"
	m, err := domain.NewMovie("m1", "Movie", 1000, 25, now)
	if err != nil {
		t.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "a", X: 0.5, Y: 0.5}}
	running, err := domain.Execute(&m, domain.StartTrace{JobID: job, User: alice, Now: now, Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	running.Progress.FramesWritten = 417
	running.KeptFrames = 0
	done, err := domain.Execute(&running, domain.CancelTrace{Job: *running.Lease, User: alice, Now: now.Add(time.Second), FramesWritten: 417})
	if err != nil {
		t.Fatal(err)
	}
	settle := domain.SettleCancel{JobID: job, Frames: 184, Kept: 417, Now: now.Add(2 * time.Second)}
	for name, c := range map[string]struct {
		cmd  domain.Command
		on   domain.Movie
		code domain.Code
	}{
		"another job":         {domain.SettleCancel{JobID: other, Frames: 601, Now: settle.Now}, done, domain.CodeNotTracing},
		"a negative count":    {domain.SettleCancel{JobID: job, Frames: -1, Now: settle.Now}, done, domain.CodeInvalid},
		"no job":              {domain.SettleCancel{Frames: 1, Now: settle.Now}, done, domain.CodeLeaseRequired},
		"while still tracing": {settle, running, domain.CodeNotTracing},
	} {
		got, err := domain.Execute(&c.on, c.cmd)
		if domain.ErrorCode(err) != c.code || got.Version != c.on.Version {
			t.Errorf("%s: %v (version %d -> %d), want %s", name, err, c.on.Version, got.Version, c.code)
		}
	}
	settled, err := domain.Execute(&done, settle)
	if err != nil {
		t.Fatal(err)
	}
	if settled.TracedFrames() != 601 || settled.LastJob.Frames != 184 || settled.Version != done.Version+1 || settled.Status != domain.StatusCancelled {
		t.Fatalf("settled: traced %d, job %+v, version %d", settled.TracedFrames(), settled.LastJob, settled.Version)
	}
	again, err := domain.Execute(&settled, settle)
	if err != nil || again.Version != settled.Version {
		t.Fatalf("a retried settle: %v, version %d -> %d (want a no-op success)", err, settled.Version, again.Version)
	}
}

// An edit of the settings after a trace makes its results stale and is the
// holder's activity; a heartbeat is not.
func TestEditsMarkResultsStaleAndActivity(t *testing.T) {
	m := newMovie(t)
	m.LastJob = &domain.JobRecord{JobID: job1, Status: domain.StatusTraced, StartedAt: at(-time.Minute), FinishedAt: at(-time.Second)}
	m, err := domain.Execute(&m, domain.OpenAnalysis{LeaseID: leaseA, User: domain.User{ID: "u-alice", Name: "Alice"}, Now: at(0), Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if m.ResultsStale() || !m.Lease.EditedAt.IsZero() {
		t.Fatalf("fresh: stale %v, edited %v", m.ResultsStale(), m.Lease.EditedAt)
	}
	m, err = domain.Execute(&m, domain.Heartbeat{LeaseID: leaseA, Now: at(time.Second), Duration: time.Minute})
	if err != nil || !m.Lease.EditedAt.IsZero() {
		t.Fatalf("a heartbeat: %v, edited %v", err, m.Lease.EditedAt)
	}
	m, err = domain.Execute(&m, domain.EditCaptureInterval{LeaseID: leaseA, Now: at(2 * time.Second), Interval: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !m.ResultsStale() || !m.Lease.EditedAt.Equal(at(2*time.Second)) || !m.SettingsChangedAt.Equal(at(2*time.Second)) {
		t.Fatalf("after an edit: stale %v, edited %v", m.ResultsStale(), m.Lease.EditedAt)
	}
}

func TestAskRelease(t *testing.T) {
	alice, bob := domain.User{ID: "u-alice", Name: "Alice"}, domain.User{ID: "u-bob", Name: "Bob"}
	free := newMovie(t)
	if _, err := domain.Execute(&free, domain.AskRelease{User: bob, Now: at(0)}); domain.ErrorCode(err) != domain.CodeNotHeld {
		t.Fatalf("asking on a free movie: %v, want not_held", err)
	}
	if _, err := domain.Execute(&free, domain.AskRelease{Now: at(0)}); domain.ErrorCode(err) != domain.CodeInvalid {
		t.Fatalf("asking with no user: %v, want invalid", err)
	}
	held, err := domain.Execute(&free, domain.OpenAnalysis{LeaseID: leaseA, User: alice, Now: at(0), Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	asked, err := domain.Execute(&held, domain.AskRelease{User: bob, Now: at(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if a := asked.Lease.ReleaseAsk; a == nil || a.UserName != "Bob" || !a.At.Equal(at(time.Second)) || asked.Lease.ID != leaseA || !asked.Lease.ExpiresAt.Equal(held.Lease.ExpiresAt) {
		t.Fatalf("after the ask: %+v", asked.Lease)
	}
	// It grants nothing: the holder still edits, and releases when she wants.
	if _, err := domain.Execute(&asked, domain.EditCaptureInterval{LeaseID: leaseA, Now: at(2 * time.Second), Interval: 2}); err != nil {
		t.Fatalf("the holder's edit after an ask: %v", err)
	}
	// A stale lease is nobody's: asking is not_held.
	if _, err := domain.Execute(&asked, domain.AskRelease{User: bob, Now: at(time.Minute)}); domain.ErrorCode(err) != domain.CodeNotHeld {
		t.Fatalf("asking after the lease lapsed: %v", err)
	}
}

package domain_test

import (
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

func TestCancelTrace(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	alice := domain.User{ID: "u-alice", Name: "Alice"}
	bob := domain.User{ID: "u-bob", Name: "Bob"}
	const job, other = "11111111111111111111111111111111", "22222222222222222222222222222222"
	m, err := domain.NewMovie("m1", "Movie", 100, 25, now)
	if err != nil {
		t.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "a", X: 0.5, Y: 0.5}}
	running, err := domain.Execute(&m, domain.StartTrace{JobID: job, User: alice, Now: now, Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	running, err = domain.Execute(&running, domain.ClaimSegment{JobID: job, Now: now.Add(time.Second), Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	running.Progress.FramesWritten = 30
	lease := *running.Lease
	at := now.Add(10 * time.Second)

	// Only the starter may cancel, only the running job, only while it is live.
	for name, c := range map[string]struct {
		cmd  domain.CancelTrace
		code domain.Code
	}{
		"someone else":     {domain.CancelTrace{Job: lease, User: bob, Now: at, FramesWritten: 30}, domain.CodeNotYourTrace},
		"another job":      {domain.CancelTrace{Job: domain.Lease{ID: other}, User: alice, Now: at}, domain.CodeNotTracing},
		"after the expiry": {domain.CancelTrace{Job: lease, User: alice, Now: lease.ExpiresAt, FramesWritten: 30}, domain.CodeNotTracing},
		"no job ID":        {domain.CancelTrace{User: alice, Now: at}, domain.CodeLeaseRequired},
	} {
		got, err := domain.Execute(&running, c.cmd)
		if domain.ErrorCode(err) != c.code || got.Version != running.Version {
			t.Errorf("%s: %v (version %d -> %d), want %s", name, err, running.Version, got.Version, c.code)
		}
	}

	done, err := domain.Execute(&running, domain.CancelTrace{Job: lease, User: alice, Now: at, FramesWritten: 30})
	if err != nil {
		t.Fatal(err)
	}
	j := done.LastJob
	if done.Status != domain.StatusCancelled || done.Lease != nil || j == nil || j.Status != domain.StatusCancelled ||
		j.JobID != job || j.Frames != 30 || !j.FinishedAt.Equal(at) || j.UserName != "Alice" || done.Version != running.Version+1 {
		t.Fatalf("after the cancel: status %s lease %+v job %+v version %d", done.Status, done.Lease, j, done.Version)
	}
	// The worker's next fenced write is refused: it stops there.
	if _, err := domain.Execute(&done, domain.RenewJob{JobFence: domain.JobFence{JobID: job, Now: at.Add(time.Second)}, Duration: time.Minute, FramesWritten: 31}); domain.ErrorCode(err) != domain.CodeLeaseLost {
		t.Fatalf("the worker's renewal after the cancel: %v", err)
	}
	// A cancel that comes twice is refused the second time.
	if _, err := domain.Execute(&done, domain.CancelTrace{Job: lease, User: alice, Now: at, FramesWritten: 30}); domain.ErrorCode(err) != domain.CodeNotTracing {
		t.Fatalf("second cancel: %v", err)
	}
	// A new trace can start at once.
	if _, err := domain.Execute(&done, domain.StartTrace{JobID: other, User: bob, Now: at, Duration: time.Minute}); err != nil {
		t.Fatalf("a trace after the cancel: %v", err)
	}
}

package events

import (
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// After a job finished, changes that keep its record and its status (Alice
// opens Analyze on the traced movie, heartbeats, releases) derive nothing:
// the completion is derived once, from the change that recorded it.
func TestDeriveNothingAfterTheFinishedJob(t *testing.T) {
	r := newRow(t)
	r.do(started(job1, alice, t0, 0), domain.ClaimSegment{JobID: job1, Now: t0, Duration: leaseD})
	r.do(domain.CompleteJob{Job: *r.m.Lease, Now: t0.Add(time.Minute), FramesWritten: 300})
	done := len(r.steps)
	at := t0.Add(2 * time.Minute)
	r.do(domain.OpenAnalysis{LeaseID: lease1, User: alice, Now: at, Duration: leaseD},
		domain.Heartbeat{LeaseID: lease1, Now: at.Add(time.Second), Duration: leaseD},
		domain.Release{LeaseID: lease1, Now: at.Add(2 * time.Second)})
	for _, s := range r.steps[done:] {
		if s.new.Status != domain.StatusTraced || s.new.LastJob == nil || s.new.LastJob.JobID != job1 {
			t.Fatalf("the step left the row %+v", s.new)
		}
		if evs := Derive(&s.old, &s.new); len(evs) != 0 {
			t.Fatalf("a change after the completion derived %+v", evs)
		}
	}
}

// An abandoned job's event counts the frames it made durable (its last
// renewal's progress), not the frames its plan would have written.
func TestDeriveAbandonedCountsDurableFrames(t *testing.T) {
	r := newRow(t)
	r.do(started(job1, alice, t0, 0), domain.ClaimSegment{JobID: job1, Now: t0, Duration: leaseD})
	r.do(domain.BeginTrace{JobFence: domain.JobFence{JobID: job1, Now: t0}, Duration: leaseD, TotalFrames: 300},
		domain.RenewJob{JobFence: domain.JobFence{JobID: job1, Now: t0.Add(time.Second)}, Duration: leaseD, FramesWritten: 120})
	r.do(started(job2, bob, t0.Add(time.Second+leaseD), 0))
	last := r.steps[len(r.steps)-1]
	evs := Derive(&last.old, &last.new)
	if len(evs) != 2 || evs[0].Type != TracingAbandoned || evs[0].JobID != job1 {
		t.Fatalf("got %+v", evs)
	}
	if ab := evs[0]; ab.Frames != 120 || ab.FirstFrame != 0 || ab.LastFrame != 119 || ab.TrimEnd != 300 {
		t.Fatalf("abandoned %+v, want frames 120 (0-119) of trim [0, 300)", ab)
	}
}

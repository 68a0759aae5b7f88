package events

import (
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// A second finished job (issue 11 item 9): the row's last job was job1
// (traced); job2 then fails. The change derives job2's failure only, never
// job1's completion again, and nothing for the steps in between.
func TestDeriveSecondFinishedJob(t *testing.T) {
	r := newRow(t)
	r.do(started(job1, alice, t0, 0), domain.ClaimSegment{JobID: job1, Now: t0, Duration: leaseD})
	r.do(domain.CompleteJob{Job: *r.m.Lease, Now: t0.Add(time.Minute), FramesWritten: 3})
	r.do(started(job2, bob, t0.Add(2*time.Minute), 0), domain.ClaimSegment{JobID: job2, Now: t0.Add(2 * time.Minute), Duration: leaseD})
	r.do(domain.FailJob{Job: *r.m.Lease, Now: t0.Add(3 * time.Minute), FramesWritten: 1, Summary: "lost"})
	last := r.steps[len(r.steps)-1]
	evs := Derive(&last.old, &last.new)
	if len(evs) != 1 || evs[0].Type != TracingFailed || evs[0].JobID != job2 || evs[0].UserName != "Bob" {
		t.Fatalf("second finished job derived %+v, want one movie.tracing.failed of job2", evs)
	}
	claim := r.steps[len(r.steps)-2]
	if evs := Derive(&claim.old, &claim.new); len(evs) != 0 {
		t.Fatalf("the claim of job2, with job1 still the recorded last job, derived %+v", evs)
	}
}

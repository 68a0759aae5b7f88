package events

import (
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// A segmented trace's history states the range its plan traced, recorded
// when the plan was made: a 300-frame job asked to start at frame 100 on a
// never-traced movie plans frames 0-299 (it starts no later than
// CleanBefore); the hand-off at frame 50 moves CleanBefore to 50, yet the
// completion still says 0-299, not 50-349 (beyond the movie).
func TestDeriveSegmentedTraceStatesThePlannedRange(t *testing.T) {
	r := newRow(t)
	r.do(started(job1, alice, t0, 100), domain.ClaimSegment{JobID: job1, Now: t0, Duration: leaseD})
	plan := domain.PlanTrace(r.m, *r.m.Lease)
	if plan.From != 0 || plan.Frames != 300 {
		t.Fatalf("plan %+v, want frames 0-299", plan)
	}
	at := t0.Add(time.Second)
	r.do(domain.BeginTrace{JobFence: domain.JobFence{JobID: job1, Now: at}, Duration: leaseD,
		CleanBefore: plan.ClearFrom, TotalFrames: plan.Frames, PlanFrom: plan.From},
		domain.HandOffJob{JobFence: domain.JobFence{JobID: job1, Now: at.Add(time.Second)}, Duration: leaseD,
			FramesWritten: 50, CleanBefore: plan.FrameAt(50)},
		domain.ClaimSegment{JobID: job1, Segment: 1, Now: at.Add(2 * time.Second), Duration: leaseD})
	if r.m.CleanBefore != 50 || r.m.Lease.PlanFrom != 0 {
		t.Fatalf("after the hand-off the row is %+v (lease %+v)", r.m, *r.m.Lease)
	}
	r.do(domain.CompleteJob{Job: *r.m.Lease, Now: at.Add(time.Minute), FramesWritten: 300})
	last := r.steps[len(r.steps)-1]
	evs := Derive(&last.old, &last.new)
	if len(evs) != 1 || evs[0].Type != TracingCompleted {
		t.Fatalf("got %+v", evs)
	}
	if e := evs[0]; e.Frames != 300 || e.FirstFrame != 0 || e.LastFrame != 299 || e.FromFrame != 100 {
		t.Fatalf("completed %+v, want frames 300 (0-299) asked from 100", e)
	}
}

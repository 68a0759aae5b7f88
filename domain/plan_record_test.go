package domain_test

import (
	"testing"

	"github.com/movietrace/tracinglocks/domain"
)

// BeginTrace records where the job's plan starts on its lease, and the
// record outlives the hand-off that moves CleanBefore: a job asked to start
// at frame 100 of a never-traced 300-frame trim plans frames 0-299; after the
// hand-off at frame 50, PlanTrace of the row would say 50, the lease still
// says 0. A retry of another plan is not
// taken for the recorded one.
func TestBeginTraceRecordsThePlanStart(t *testing.T) {
	m := analysing(t, leaseA, alice, t0)
	m.Settings.Trim = domain.Trim{Start: 0, End: 300}
	m = exec(t, m, domain.StartTrace{LeaseID: leaseA, JobID: job1, User: alice, FromFrame: 100, Now: t0, Duration: d})
	m = exec(t, m, domain.ClaimSegment{JobID: job1, Now: t0, Duration: d})
	plan := domain.PlanTrace(m, *m.Lease)
	if plan.From != 0 || plan.Frames != 300 {
		t.Fatalf("plan %+v, want frames 0-299", plan)
	}
	begin := domain.BeginTrace{JobFence: domain.JobFence{JobID: job1, Now: at(msd(1))}, Duration: d,
		CleanBefore: plan.ClearFrom, TotalFrames: plan.Frames, PlanFrom: plan.From}
	m = exec(t, m, begin)
	if m.Lease.PlanFrom != 0 || m.Progress.TotalFrames != 300 {
		t.Fatalf("after BeginTrace lease %+v progress %+v", *m.Lease, m.Progress)
	}
	if !domain.Holds(begin.AlreadyApplied(), &m) {
		t.Fatal("the recorded BeginTrace is not recognised when retried")
	}
	other := begin
	other.PlanFrom = 10
	if domain.Holds(other.AlreadyApplied(), &m) {
		t.Fatal("a BeginTrace of another plan is taken for the recorded one")
	}
	m = exec(t, m, domain.HandOffJob{JobFence: domain.JobFence{JobID: job1, Now: at(msd(2))}, Duration: d,
		FramesWritten: 50, CleanBefore: plan.FrameAt(50)})
	m = exec(t, m, claimSeg(job1, 1, 3))
	if m.CleanBefore != 50 || m.Lease.PlanFrom != 0 {
		t.Fatalf("after the hand-off clean before %d, lease %+v", m.CleanBefore, *m.Lease)
	}
	if got := domain.PlanTrace(m, *m.Lease).From; got == m.Lease.PlanFrom {
		t.Fatalf("the row's recomputed plan (%d) equals the recorded one: the test shows nothing", got)
	}
	if p, err := domain.ResumePlan(m); err != nil || p.From != m.Lease.PlanFrom {
		t.Fatalf("resume plan %+v %v, want from %d", p, err, m.Lease.PlanFrom)
	}
}

package events

import (
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// TestDeriveSecondFinishedJob: a movie traced twice. The second job's
// terminal write replaces a lastJob that was already finished (job1), so
// "a job record that was not there before" must compare job IDs, not the
// presence of a record: the second completion (and a second job's failure)
// derives its own event, and every change in between derives nothing more.
func TestDeriveSecondFinishedJob(t *testing.T) {
	for _, fail := range []bool{false, true} {
		r := newRow(t)
		trace := func(lease, job string, u domain.User, at time.Time) {
			r.do(
				domain.OpenAnalysis{LeaseID: lease, User: u, Now: at, Duration: leaseD},
				domain.StartTrace{LeaseID: lease, JobID: job, User: u, FromFrame: 0, Now: at.Add(time.Minute), Duration: leaseD},
				domain.ClaimJob{JobID: job, Now: at.Add(2 * time.Minute), Duration: leaseD},
			)
		}
		trace(lease1, job1, alice, t0)
		r.do(domain.CompleteJob{Job: *r.m.Lease, Now: t0.Add(3 * time.Minute), FramesWritten: 300, CleanBefore: 300})
		firstDone := len(r.steps)
		trace(lease2, job2, bob, t0.Add(10*time.Minute))
		job := *r.m.Lease
		if fail {
			r.do(domain.FailJob{Job: job, Now: t0.Add(13 * time.Minute), FramesWritten: 7, Summary: "decoder gave up"})
		} else {
			r.do(domain.CompleteJob{Job: job, Now: t0.Add(13 * time.Minute), FramesWritten: 300, CleanBefore: 300})
		}
		last := r.steps[len(r.steps)-1]
		if last.old.LastJob == nil || last.old.LastJob.JobID != job1 {
			t.Fatalf("the second terminal write does not replace job1's record: old lastJob %+v", last.old.LastJob)
		}

		var got []Event
		for i, s := range r.steps[firstDone:] {
			evs := Derive(&s.old, &s.new)
			if i < len(r.steps[firstDone:])-1 && len(evs) > 0 && evs[0].Type != TracingStarted {
				t.Errorf("step %d after job1 finished derived %+v", i, evs)
			}
			got = append(got, evs...)
		}
		wantType := TracingCompleted
		if fail {
			wantType = TracingFailed
		}
		if len(got) != 2 || got[0].Type != TracingStarted || got[0].JobID != job2 ||
			got[1].Type != wantType || got[1].JobID != job2 || got[1].UserID != bob.ID || !got[1].At.Equal(t0.Add(13*time.Minute)) {
			t.Fatalf("fail=%v: derived %+v, want job2 started then %s", fail, got, wantType)
		}
	}
}

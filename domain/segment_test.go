package domain_test

import (
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

func claimSeg(job string, seg int, ms int64) domain.ClaimSegment {
	return domain.ClaimSegment{JobID: job, Segment: seg, Now: at(msd(ms)), Duration: d}
}

func handOff(t *testing.T, m domain.Movie, job string, seg int, frames int, now int64) domain.Movie {
	t.Helper()
	return exec(t, m, domain.HandOffJob{JobFence: domain.JobFence{JobID: job, Now: at(msd(now))}, Segment: seg, Duration: d, FramesWritten: frames})
}

func TestClaimSegment(t *testing.T) {
	queued := tracing(t, job1, t0)
	first := exec(t, queued, claimSeg(job1, 0, 1))
	handed := handOff(t, first, job1, 0, 40, 2)
	runCases(t, []cmdCase{
		{name: "segment 0 of a queued job is claimed once", movie: queued, cmd: claimSeg(job1, 0, 1),
			check: func(t *testing.T, _, after domain.Movie) {
				if !after.Lease.Claimed || after.Lease.Segment != 0 || !after.Lease.ExpiresAt.Equal(at(ms).Add(d)) {
					t.Fatalf("lease %+v", after.Lease)
				}
			}},
		{name: "a redelivered segment 0 is already_claimed", movie: first, cmd: claimSeg(job1, 0, 3), code: domain.CodeAlreadyClaimed},
		{name: "a job that waited in the queue past its lease is revived, not lost", movie: queued, cmd: claimSeg(job1, 0, int64(3*d/ms)),
			check: func(t *testing.T, _, after domain.Movie) {
				if !after.Lease.Claimed || !after.Lease.ExpiresAt.Equal(at(3*d).Add(d)) || after.Status != domain.StatusTracing {
					t.Fatalf("lease %+v", after.Lease)
				}
			}},
		{name: "a claimed stale job is not revived", movie: first, cmd: claimSeg(job1, 0, int64(3*d/ms)), code: domain.CodeAlreadyClaimed},
		{name: "the continuation claims segment 1 once", movie: handed, cmd: claimSeg(job1, 1, 3),
			check: func(t *testing.T, _, after domain.Movie) {
				if !after.Lease.Claimed || after.Lease.Segment != 1 || after.Progress.FramesWritten != 40 {
					t.Fatalf("row %+v", after)
				}
			}},
		{name: "a redelivered segment 0 after the hand-off is refused", movie: handed, cmd: claimSeg(job1, 0, 3), code: domain.CodeAlreadyClaimed},
		{name: "a segment from the future is refused", movie: handed, cmd: claimSeg(job1, 2, 3), code: domain.CodeAlreadyClaimed},
		{name: "another job is lease_lost", movie: queued, cmd: claimSeg(job2, 0, 1), code: domain.CodeLeaseLost},
		{name: "an analysis lease with the job's ID is lease_lost", movie: analysing(t, job1, bob, t0), cmd: claimSeg(job1, 0, 1), code: domain.CodeLeaseLost},
		{name: "a negative segment is invalid", movie: queued, cmd: claimSeg(job1, -1, 1), code: domain.CodeInvalid, field: "segment"},
		{name: "a zero duration is invalid", movie: queued, cmd: domain.ClaimSegment{JobID: job1, Now: t0}, code: domain.CodeInvalid, field: "duration"},
	})
}

func TestHandOffJob(t *testing.T) {
	running := exec(t, tracing(t, job1, t0), claimSeg(job1, 0, 1))
	h := func(job string, seg, frames int, ms int64) domain.HandOffJob {
		return domain.HandOffJob{JobFence: domain.JobFence{JobID: job, Now: at(msd(ms))}, Segment: seg, Duration: d, FramesWritten: frames}
	}
	runCases(t, []cmdCase{
		{name: "the claimed segment hands off with its checkpoint", movie: running, cmd: h(job1, 0, 99, 5),
			check: func(t *testing.T, _, after domain.Movie) {
				l := after.Lease
				if l.Claimed || l.Segment != 1 || after.Progress.FramesWritten != 99 || !l.ExpiresAt.Equal(at(5*ms).Add(d)) || after.Status != domain.StatusTracing {
					t.Fatalf("row %+v lease %+v", after, l)
				}
			}},
		{name: "a hand-off of another segment is lease_lost", movie: running, cmd: h(job1, 1, 99, 5), code: domain.CodeLeaseLost},
		{name: "an unclaimed job cannot hand off", movie: tracing(t, job1, t0), cmd: h(job1, 0, 0, 5), code: domain.CodeLeaseLost},
		{name: "a stale job cannot hand off", movie: running, cmd: h(job1, 0, 0, int64(2*d/ms)), code: domain.CodeLeaseLost},
		{name: "negative progress is invalid", movie: running, cmd: h(job1, 0, -1, 5), code: domain.CodeInvalid, field: "framesWritten"},
	})
}

func TestFinalizeStaleTrace(t *testing.T) {
	queued := tracing(t, job1, t0)
	running := exec(t, exec(t, queued, claimSeg(job1, 0, 1)), domain.RenewJob{JobFence: domain.JobFence{JobID: job1, Now: at(2 * ms)}, Duration: d, FramesWritten: 30})
	stale := at(2 * d)
	fin := func(m domain.Movie, now int64) domain.FinalizeStaleTrace {
		return domain.FinalizeStaleTrace{Job: *m.Lease, FramesWritten: m.Progress.FramesWritten, Now: at(msd(now))}
	}
	runCases(t, []cmdCase{
		{name: "a job that never left the queue ends visibly", movie: queued, cmd: domain.FinalizeStaleTrace{Job: *queued.Lease, Now: stale},
			check: func(t *testing.T, _, after domain.Movie) {
				if after.Lease != nil || after.Status != domain.StatusFailed || after.LastJob.FailureSummary != domain.QueuedTooLongSummary || after.LastJob.JobID != job1 {
					t.Fatalf("row %+v job %+v", after, after.LastJob)
				}
			}},
		{name: "a claimed job whose worker died ends as stalled with its progress", movie: running, cmd: fin(running, int64(2*d/ms)),
			check: func(t *testing.T, _, after domain.Movie) {
				if after.Status != domain.StatusFailed || after.LastJob.FailureSummary != domain.StalledSummary || after.LastJob.Frames != 30 {
					t.Fatalf("job %+v", after.LastJob)
				}
			}},
		{name: "a live lease is left alone", movie: running, cmd: fin(running, int64(d/ms)), code: domain.CodeLeaseLost},
		{name: "a lease exactly at its expiry is stale", movie: running, cmd: fin(running, int64((d+2*ms)/ms))},
		{name: "progress that moved since the read is left alone", movie: running,
			cmd: domain.FinalizeStaleTrace{Job: *running.Lease, FramesWritten: 29, Now: stale}, code: domain.CodeLeaseLost},
		{name: "a job claimed since the read is left alone", movie: running,
			cmd: domain.FinalizeStaleTrace{Job: *queued.Lease, Now: stale}, code: domain.CodeLeaseLost},
		{name: "an empty job ID is lease_required", movie: queued, cmd: domain.FinalizeStaleTrace{Now: stale}, code: domain.CodeLeaseRequired, field: "jobId"},
	})
}

// msd is n milliseconds.
func msd(n int64) time.Duration { return time.Duration(n) * ms }

// TestResumePlan: the continuation's plan from the row, and rows that fit
// no plan.
func TestResumePlan(t *testing.T) {
	m := newMovie(t)
	m.Settings.Trim = domain.Trim{Start: 10, End: 110}
	m.Settings.CaptureInterval = 4
	m.CleanBefore, m.Progress = 10+4*7, domain.Progress{FramesWritten: 7, TotalFrames: 25}
	p, err := domain.ResumePlan(m)
	if err != nil || p.From != 10 || p.Frames != 25 || p.FrameAt(7) != m.CleanBefore || p.End != 110 {
		t.Fatalf("%+v %v", p, err)
	}
	for name, edit := range map[string]func(*domain.Movie){
		"off the grid":          func(m *domain.Movie) { m.CleanBefore++ },
		"before the trim":       func(m *domain.Movie) { m.Progress.FramesWritten = 8 },
		"wrong total":           func(m *domain.Movie) { m.Progress.TotalFrames = 24 },
		"more written than all": func(m *domain.Movie) { m.CleanBefore, m.Progress.FramesWritten = 10+4*26, 26 },
		"another recorded start": func(m *domain.Movie) {
			m.Lease = &domain.Lease{Kind: domain.LeaseTracing, ID: job1, PlanFrom: 14}
		},
	} {
		bad := m
		edit(&bad)
		if _, err := domain.ResumePlan(bad); err == nil {
			t.Errorf("%s: accepted %+v", name, bad.Progress)
		}
	}
	// The recorded start agrees, or (a row from before it was recorded) is 0.
	for _, planFrom := range []int{10, 0} {
		ok := m
		ok.Lease = &domain.Lease{Kind: domain.LeaseTracing, ID: job1, PlanFrom: planFrom}
		if p, err := domain.ResumePlan(ok); err != nil || p.From != 10 {
			t.Errorf("recorded start %d: %+v %v", planFrom, p, err)
		}
	}
}

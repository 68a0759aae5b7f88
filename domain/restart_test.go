package domain_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/movietrace/tracinglocks/domain"
)

func TestRestartOf(t *testing.T) {
	movie := func(status domain.Status, start, end, interval, clean, lastFrames int) domain.Movie {
		m := newMovie(t)
		m.Status = status
		m.Settings.Trim = domain.Trim{Start: start, End: end}
		m.Settings.CaptureInterval = interval
		m.CleanBefore = clean
		if lastFrames >= 0 {
			m.LastJob = &domain.JobRecord{JobID: job1, Status: status, Frames: lastFrames}
		}
		return m
	}
	for _, tc := range []struct {
		name string
		m    domain.Movie
		want domain.Restart
	}{
		{"a failed trace checkpointed at 120 resumes there",
			movie(domain.StatusFailed, 0, 300, 1, 120, 120), domain.Restart{Resumes: true, ResumeFrom: 120}},
		{"a cancelled trace checkpointed at 60 resumes there",
			movie(domain.StatusCancelled, 0, 300, 1, 60, 90), domain.Restart{Resumes: true, ResumeFrom: 60}},
		{"an off-grid checkpoint resumes at the next frame of the grid",
			movie(domain.StatusFailed, 10, 110, 7, 20, 3), domain.Restart{Resumes: true, ResumeFrom: 24}},
		{"a settings or markers edit reset the clean range: the saved frames are replaced",
			movie(domain.StatusFailed, 0, 300, 1, 0, 120), domain.Restart{Replaces: true}},
		{"a failure before any checkpoint saved frames that are replaced",
			movie(domain.StatusFailed, 50, 300, 1, 50, 30), domain.Restart{Replaces: true}},
		{"a failure that saved nothing has nothing to keep or replace",
			movie(domain.StatusFailed, 0, 300, 1, 0, 0), domain.Restart{}},
		{"a checkpoint at the trim's end leaves nothing to resume",
			movie(domain.StatusFailed, 0, 300, 1, 300, 300), domain.Restart{Replaces: true}},
		{"a complete trace is retraced from the chosen frame",
			movie(domain.StatusTraced, 0, 300, 1, 300, 300), domain.Restart{}},
		{"a ready movie has no restart",
			movie(domain.StatusReady, 0, 300, 1, 0, -1), domain.Restart{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := domain.RestartOf(tc.m, t0); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestRestartOfAStalledTrace: a trace whose lease went stale is shown as
// failed (View), and resumes at its last checkpoint like any failure.
func TestRestartOfAStalledTrace(t *testing.T) {
	m := newMovie(t)
	m.Status = domain.StatusTracing
	m.CleanBefore = 180
	m.Lease = &domain.Lease{Kind: domain.LeaseTracing, ID: job1, Claimed: true, ExpiresAt: t0}
	if got := domain.RestartOf(m, t0.Add(1)); got != (domain.Restart{Resumes: true, ResumeFrom: 180}) {
		t.Fatalf("stale trace: %+v", got)
	}
	if got := domain.RestartOf(m, t0.Add(-1)); got != (domain.Restart{}) {
		t.Fatalf("running trace: %+v", got)
	}
}

// TestRestartAgreesWithThePlan is Restart's invariant: a resuming retrace
// from any frame at or after ResumeFrom plans to start there and clears
// nothing below the clean range; one from an earlier frame clears from its
// own start (it replaces those frames).
func TestRestartAgreesWithThePlan(t *testing.T) {
	base := newMovie(t)
	rapid.Check(t, func(rt *rapid.T) {
		m := base
		start := rapid.IntRange(0, 500).Draw(rt, "start")
		end := rapid.IntRange(start+1, 1000).Draw(rt, "end")
		m.Settings.Trim = domain.Trim{Start: start, End: end}
		m.Settings.CaptureInterval = rapid.IntRange(1, 50).Draw(rt, "interval")
		m.CleanBefore = rapid.IntRange(0, 1000).Draw(rt, "cleanBefore")
		m.Status = rapid.SampledFrom([]domain.Status{domain.StatusFailed, domain.StatusCancelled}).Draw(rt, "status")
		m.LastJob = &domain.JobRecord{JobID: job1, Status: m.Status, Frames: rapid.IntRange(0, 100).Draw(rt, "frames")}
		r := domain.RestartOf(m, t0)
		if r.Resumes == r.Replaces && (r.Resumes || m.LastJob.Frames > 0) {
			rt.Fatalf("restart %+v for saved frames %d", r, m.LastJob.Frames)
		}
		if !r.Resumes {
			return
		}
		from := rapid.IntRange(r.ResumeFrom, end-1).Draw(rt, "from")
		p := domain.PlanTrace(m, domain.Lease{Kind: domain.LeaseTracing, FromFrame: from})
		if p.From != r.ResumeFrom || p.ClearFrom != m.CleanBefore || p.ClearFrom > p.From || p.Frames == 0 {
			rt.Fatalf("restart %+v but a trace from %d plans %+v (clean before %d)", r, from, p, m.CleanBefore)
		}
		earlier := rapid.IntRange(start, r.ResumeFrom-1).Draw(rt, "earlier")
		if q := domain.PlanTrace(m, domain.Lease{Kind: domain.LeaseTracing, FromFrame: earlier}); q.ClearFrom > earlier {
			rt.Fatalf("a trace from %d before the resume point clears only from %d", earlier, q.ClearFrom)
		}
	})
}

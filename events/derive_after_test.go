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

func TestCalibrationChangesAreHistory(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	base := domain.Movie{ID: "m1", Status: domain.StatusReady, Version: 7, UpdatedAt: t0,
		Lease: &domain.Lease{Kind: domain.LeaseAnalysis, ID: "0123456789abcdef0123456789abcdef", UserID: "u1", UserName: "Ada", ExpiresAt: t0.Add(time.Minute)}}
	c := domain.Calibration{Line: domain.Line{X1: 0.1, Y1: 0.5, X2: 0.9, Y2: 0.5}, Length: 10, Unit: domain.UnitMillimetre, OriginX: 0.1, OriginY: 0.9, YUp: true}
	with := func(m domain.Movie, c *domain.Calibration, v int64) *domain.Movie {
		m.Calibration, m.Version = c, v
		return &m
	}
	c2 := c
	c2.Length = 12

	set := Derive(with(base, nil, 6), with(base, &c, 7))
	if len(set) != 1 || set[0].Type != CalibrationSet || set[0].UserName != "Ada" || set[0].UserID != "u1" || !set[0].At.Equal(t0) ||
		set[0].JobID != "" || set[0].AuditKey() != "v7#movie.calibration.set" ||
		set[0].Calibration != "line (0.1, 0.5)-(0.9, 0.5) on frame 0 = 10 mm; origin (0.1, 0.9); x axis at 0°, y up" {
		t.Fatalf("set: %+v", set)
	}
	if changed := Derive(with(base, &c, 7), with(base, &c2, 8)); len(changed) != 1 || changed[0].Type != CalibrationSet || changed[0].AuditKey() != "v8#movie.calibration.set" {
		t.Fatalf("changed: %+v", changed)
	}
	if same := Derive(with(base, &c, 7), with(base, &c, 8)); len(same) != 0 {
		t.Fatalf("a heartbeat on a calibrated movie derived %+v", same)
	}
	if cleared := Derive(with(base, &c, 8), with(base, nil, 9)); len(cleared) != 1 || cleared[0].Type != CalibrationCleared || cleared[0].Calibration != "" {
		t.Fatalf("cleared: %+v", cleared)
	}
}

package worker_test

import (
	"context"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

// TestRetraceAfterTheTrimNarrowedClearsBelowItsStart: a movie traced over
// [0, 300), then its trim narrowed to [100, 300) and retraced from 150. The
// retrace starts at the trim's start (the edit reset the clean range) but
// clears from 0, not from where it starts: the frames an older, wider trim
// left below 100 are not results of these settings. Its plan goes on the
// row first (clean before 0), and at the end only this job's frames
// 100-299 are stored, clean before the trim's end.
func TestRetraceAfterTheTrimNarrowedClearsBelowItsStart(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("mt", 300)
	ctx := context.Background()
	if out := e.newWorker(tracer.NewSynthetic(), lease).Run(ctx, e.start("mt", alice, 0, e.now(), lease)); out.Result != worker.ResultTraced {
		t.Fatalf("first trace: %+v", out)
	}
	page := token.New()
	for _, cmd := range []domain.Command{
		domain.OpenAnalysis{LeaseID: page, User: alice, Now: e.now(), Duration: lease},
		domain.EditTrim{LeaseID: page, Now: e.now(), Trim: domain.Trim{Start: 100, End: 300}},
	} {
		if _, err := e.store.Commit(ctx, "mt", cmd); err != nil {
			t.Fatalf("%T: %v", cmd, err)
		}
	}
	jobID := token.New()
	m, err := e.store.Commit(ctx, "mt", domain.StartTrace{LeaseID: page, JobID: jobID, User: alice, FromFrame: 150, Now: e.now(), Duration: lease})
	if err != nil {
		t.Fatal(err)
	}
	tw := e.newWorker(tracer.NewSynthetic(), lease)
	job := events.TraceJob{MovieID: "mt", JobID: jobID, FromFrame: 150, Version: m.Version}
	if out := tw.Run(ctx, job); out.Result != worker.ResultTraced || out.FramesWritten != 200 {
		t.Fatalf("retrace: %+v", out)
	}
	if plan := planOf(t, tw); plan.ClearFrom != 0 || plan.From != 100 || plan.Frames != 200 {
		t.Fatalf("plan %+v, want clear from 0, trace 100-299", plan)
	}
	for _, c := range tw.movies.snapshot() {
		if b, ok := c.cmd.(domain.BeginTrace); ok && (b.CleanBefore != 0 || b.TotalFrames != 200) {
			t.Fatalf("began with %+v, want clean before 0 and 200 frames", b)
		}
	}
	stored := e.stored("mt")
	if len(stored) != 200 || stored[0].Index != 100 {
		t.Fatalf("%d frames stored from %d, want 200 from 100", len(stored), stored[0].Index)
	}
	for _, f := range stored {
		if f.JobID != jobID {
			t.Fatalf("frame %d of %s remains", f.Index, f.JobID)
		}
	}
	if m := e.get("mt"); m.Status != domain.StatusTraced || m.CleanBefore != 300 {
		t.Fatalf("row %+v", m)
	}
}

package worker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

// failAfterHandOff runs a 300-frame trace whose continuation cannot be
// sent after its first 100 frames: it fails with the summary that says the
// 100 frames are kept (issue 20 item 4's case).
func failAfterHandOff(t *testing.T, e *env, id string) (jobID string) {
	t.Helper()
	e.createMovie(id, 300)
	job := e.start(id, alice, 0, e.now(), lease)
	tw := e.newWorker(budgetTracer(e, 100), lease, segmentOptions(&memQueue{fail: errors.New("503")}))
	ctx, cancel := context.WithDeadline(context.Background(), e.now().Add(10*time.Second))
	defer cancel()
	if out := tw.Run(ctx, job); out.Result != worker.ResultFailed || !strings.Contains(out.Summary, "they are kept") {
		t.Fatalf("%+v", out)
	}
	return job.JobID
}

// TestStartItAgainKeepsTheFramesTheFailureSaysAreKept (issue 20 item 4):
// the failure says its 100 frames are kept; the movie's Restart says a
// retrace resumes at frame 100, and a retrace started there (what the page
// now starts) keeps them and traces only the 200 after them. Before, the
// page restarted from the trim's start, which replaced them.
func TestStartItAgainKeepsTheFramesTheFailureSaysAreKept(t *testing.T) {
	e := newMemEnv(t)
	first := failAfterHandOff(t, e, "mk")
	r := domain.RestartOf(e.get("mk"), e.now())
	if !r.Resumes || r.ResumeFrom != 100 {
		t.Fatalf("restart %+v, want to resume at the checkpoint 100", r)
	}
	again := e.start("mk", alice, r.ResumeFrom, e.now(), lease)
	wr := e.newWorker(tracer.NewSynthetic(), lease)
	if out := wr.Run(context.Background(), again); out.Result != worker.ResultTraced || out.FramesWritten != 200 {
		t.Fatalf("%+v", out)
	}
	frames := e.stored("mk")
	if len(frames) != 300 {
		t.Fatalf("%d frames stored", len(frames))
	}
	for _, f := range frames {
		if want := map[bool]string{true: first, false: again.JobID}[f.Index < 100]; f.JobID != want {
			t.Fatalf("frame %d is job %s's, want %s's", f.Index, f.JobID, want)
		}
	}
}

// TestStartItAgainAfterAMarkersEditReplacesTheFrames: once the markers
// changed, the kept frames are no result for them: Restart says they are
// replaced, and any retrace does replace them.
func TestStartItAgainAfterAMarkersEditReplacesTheFrames(t *testing.T) {
	e := newMemEnv(t)
	failAfterHandOff(t, e, "mr")
	leaseID := token.New()
	for _, c := range []domain.Command{
		domain.OpenAnalysis{LeaseID: leaseID, User: alice, Now: e.now(), Duration: time.Minute},
		domain.EditMarkers{LeaseID: leaseID, Now: e.now(), Markers: []domain.Marker{{ID: "tip", X: 0.4, Y: 0.4}}},
		domain.Release{LeaseID: leaseID, Now: e.now()},
	} {
		if _, err := e.store.Commit(context.Background(), "mr", c); err != nil {
			t.Fatalf("%T: %v", c, err)
		}
	}
	if r := domain.RestartOf(e.get("mr"), e.now()); r.Resumes || !r.Replaces {
		t.Fatalf("restart %+v after a markers edit, want the frames replaced", r)
	}
	again := e.start("mr", alice, 150, e.now(), lease)
	if out := e.newWorker(tracer.NewSynthetic(), lease).Run(context.Background(), again); out.Result != worker.ResultTraced || out.FramesWritten != 300 {
		t.Fatalf("%+v", out)
	}
	for _, f := range e.stored("mr") {
		if f.JobID != again.JobID {
			t.Fatalf("frame %d of the old job survived the markers edit", f.Index)
		}
	}
}

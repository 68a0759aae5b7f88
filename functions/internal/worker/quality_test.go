package worker_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

// doubting is the synthetic tracer with the points change made to them
// (by frame index and marker ID).
func doubting(change func(frame int, p *domain.Point)) tracer.Tracer {
	synth := tracer.NewSynthetic()
	return tracer.Func(func(ctx context.Context, m domain.Movie, p domain.TracePlan, emit func(domain.Frame) error) error {
		return synth.Trace(ctx, m, p, func(f domain.Frame) error {
			for i := range f.Points {
				change(f.Index, &f.Points[i])
			}
			return emit(f)
		})
	})
}

// TestCompletedJobRecordsEachMarkersQuality: the worker derives each
// marker's quality from the stored frames of the whole trim when the job
// completes, the frames a retrace kept included.
func TestCompletedJobRecordsEachMarkersQuality(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("mq", 60)
	ctx := context.Background()
	const lease = time.Minute

	first := doubting(func(n int, p *domain.Point) {
		switch {
		case p.MarkerID == "tip" && n >= 10 && n < 16:
			*p = domain.Point{MarkerID: p.MarkerID, Confidence: 0.3, Lost: true}
		case p.MarkerID == "heel" && n >= 20 && n < 23:
			p.Doubt = "appearance"
		case n >= 40:
			p.Doubt = domain.DoubtMerged
		}
	})
	if out := e.newWorker(first, lease).Run(ctx, e.start("mq", alice, 0, e.now(), lease)); out.Result != worker.ResultTraced {
		t.Fatalf("trace: %+v", out)
	}
	want := []domain.MarkerQuality{
		{MarkerID: "tip", Frames: 60, Lost: 6, Uncertain: 20, MergedWith: "heel", MergedAt: 40},
		{MarkerID: "heel", Frames: 60, Uncertain: 23, MergedWith: "tip", MergedAt: 40},
	}
	if got := e.get("mq").LastJob.Quality; !reflect.DeepEqual(got, want) {
		t.Fatalf("quality\n got %+v\nwant %+v", got, want)
	}

	// A retrace from frame 30 without doubts keeps frames 0-29.
	if out := e.newWorker(doubting(func(int, *domain.Point) {}), lease).Run(ctx, e.start("mq", alice, 30, e.now(), lease)); out.Result != worker.ResultTraced {
		t.Fatalf("retrace: %+v", out)
	}
	want = []domain.MarkerQuality{
		{MarkerID: "tip", Frames: 60, Lost: 6},
		{MarkerID: "heel", Frames: 60, Uncertain: 3},
	}
	if got := e.get("mq").LastJob.Quality; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the retrace, quality\n got %+v\nwant %+v", got, want)
	}
	if got := domain.QualitySentences(e.get("mq").Settings.Markers, want); got[0] != "tip: lost in 10% of frames, uncertain in 0%" {
		t.Fatalf("sentence %q", got[0])
	}
}

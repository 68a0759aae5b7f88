package stack

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// The zebrafish sample, traced by the real tracer from where its marker is
// placed, follows the fish's center (the drawing's own formula) on every
// frame: what `make run` shows.
func TestSampleZebrafishIsTracedForReal(t *testing.T) {
	c := sampleClips[0]
	if c.id != "zebrafish-larva" || len(c.markers) != 1 {
		t.Fatalf("first sample is %s", c.id)
	}
	path := filepath.Join(t.TempDir(), c.id+".mp4")
	err := videotest.Encode(context.Background(), path, videotest.Options{Width: c.width, Height: c.height,
		FrameRate: c.fps, Frames: c.frames, Codec: videotest.H264},
		func(i int, g []byte) { c.draw(i, g, c.width, c.height) })
	if err != nil {
		t.Fatal(err)
	}
	m, err := domain.NewMovie(c.id, c.title, c.frames, float64(c.fps), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	m.Settings.Markers = c.markers
	vt, err := tracer.NewVideo(tracer.VideoOptions{Source: tracer.SourceFunc(func(context.Context, domain.Movie) (string, error) { return path, nil })})
	if err != nil {
		t.Fatal(err)
	}
	plan := domain.PlanTrace(m, domain.Lease{})
	var worst, sum float64
	n := 0
	err = vt.Trace(context.Background(), m, plan, func(f domain.Frame) error {
		p := f.Points[0]
		if p.Lost {
			t.Fatalf("frame %d: lost (confidence %.2f)", f.Index, p.Confidence)
		}
		tt := float64(f.Index) / 24
		cx := 0.42*float64(c.width) + 80*math.Sin(tt*0.9)
		cy := 0.48*float64(c.height) + 40*math.Sin(tt*1.7)
		// Pixel centers: the drawing's (cx, cy) is the tracker's pixel
		// coordinate; PX, PY count from the frame's corner (+0.5).
		e := math.Hypot(p.PX-0.5-cx, p.PY-0.5-cy)
		worst, sum = max(worst, e), sum+e
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != c.frames || worst > 2 {
		t.Fatalf("%d frames, worst error %.2f px, mean %.2f", n, worst, sum/float64(n))
	}
	t.Logf("%d frames, mean error %.2f px, worst %.2f px", n, sum/float64(n), worst)
}

package tracer_test

import (
	"math"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
)

// A correction is a key frame: a retrace from its frame restarts the
// corrected marker from the corrected point and leaves the others as they
// were, and a marker placed on a later frame starts there.
func TestVideoTracerKeyFrames(t *testing.T) {
	const frames, k = 40, 20
	path, s := groundTruthClip(t, "clean", frames)
	m := clipMovie(t, s, 0, 1)
	if len(m.Settings.Markers) < 2 {
		t.Fatalf("the scene has %d targets, the test needs 2", len(m.Settings.Markers))
	}
	norm := func(x, y float64) (float64, float64) {
		return (x + 0.5) / float64(s.Width), (y + 0.5) / float64(s.Height)
	}
	// Marker tb is placed on the background, far from its target: it
	// drifts nowhere near it.
	m.Settings.Markers[1].X, m.Settings.Markers[1].Y = norm(30, 30)
	states := &tracer.MemoryStates{}
	tr := mustVideo(t, path, states)
	first, err := collect(t, tr, m, plan(0, frames, 1))
	if err != nil {
		t.Fatal(err)
	}

	// The user corrects tb on frame k onto its target and retraces from k.
	truth := s.Truth(k)[1]
	kx, ky := norm(truth.X, truth.Y)
	m.Settings.Keys = []domain.Key{{MarkerID: m.Settings.Markers[1].ID, Frame: k, X: kx, Y: ky}}
	p := domain.PlanTrace(m, domain.Lease{FromFrame: k})
	if p.From != k {
		t.Fatalf("plan %+v does not start at the key frame", p)
	}
	again, err := collect(t, tr, m, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != frames-k || again[0].Index != k {
		t.Fatalf("the retrace emitted %d frames from %d", len(again), again[0].Index)
	}
	for i, f := range again {
		a, b := f.Points[0], f.Points[1]
		if before := first[f.Index].Points[0]; a != before {
			t.Fatalf("frame %d: the uncorrected marker moved from %+v to %+v", f.Index, before, a)
		}
		tb := s.Truth(f.Index)[1]
		if b.Lost || math.Hypot(b.PX-0.5-tb.X, b.PY-0.5-tb.Y) > 1.5 {
			t.Fatalf("frame %d: the corrected marker is at %.1f,%.1f (lost %v), its target at %.1f,%.1f", f.Index, b.PX-0.5, b.PY-0.5, b.Lost, tb.X, tb.Y)
		}
		if i == 0 && (b.X != kx || b.Y != ky || b.Confidence != 1) {
			t.Fatalf("on the key frame the corrected marker is %+v, want the correction %v,%v", b, kx, ky)
		}
	}

	// A marker placed on frame 10 has no point before it and starts there.
	m.Settings.Keys = nil
	m.Settings.Markers[1].Frame = 10
	t10 := s.Truth(10)[1]
	m.Settings.Markers[1].X, m.Settings.Markers[1].Y = norm(t10.X, t10.Y)
	late, err := collect(t, mustVideo(t, path, nil), m, plan(0, frames, 1))
	if err != nil {
		t.Fatal(err)
	}
	n, id := len(m.Settings.Markers), m.Settings.Markers[1].ID
	for _, f := range late {
		var pt *domain.Point
		for i := range f.Points {
			if f.Points[i].MarkerID == id {
				pt = &f.Points[i]
			}
		}
		switch tb := s.Truth(f.Index)[1]; {
		case f.Index < 10 && (len(f.Points) != n-1 || pt != nil):
			t.Fatalf("frame %d before the marker's frame has %d points: %+v", f.Index, len(f.Points), f.Points)
		case f.Index < 10:
		case len(f.Points) != n || pt == nil || pt.Lost || math.Hypot(pt.PX-0.5-tb.X, pt.PY-0.5-tb.Y) > 1.5:
			t.Fatalf("frame %d: points %+v, target at %.1f,%.1f", f.Index, f.Points, tb.X, tb.Y)
		}
	}
}

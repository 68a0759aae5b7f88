package tracker_test

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/movietrace/tracinglocks/functions/internal/tracker"
	"github.com/movietrace/tracinglocks/functions/testkit/groundtruth"
)

const w, h, frames = 480, 270, 60

// run tracks a scene's raw frames (no codec) from its true positions on
// frame 0 and returns the points of every frame.
func run(t *testing.T, s *groundtruth.Scene, p tracker.Params) [][]tracker.Point {
	t.Helper()
	g := make([]byte, s.Width*s.Height)
	s.Render(0, g)
	trk, first, err := tracker.New(p, g, s.Width, s.Height, starts(s))
	if err != nil {
		t.Fatal(err)
	}
	out := [][]tracker.Point{first}
	for f := 1; f < s.Frames; f++ {
		s.Render(f, g)
		pts, err := trk.Step(g)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pts)
	}
	return out
}

func starts(s *groundtruth.Scene) [][2]float64 {
	var at [][2]float64
	for _, tr := range s.Truth(0) {
		at = append(at, [2]float64{tr.X, tr.Y})
	}
	return at
}

func scene(t *testing.T, cond string) *groundtruth.Scene {
	t.Helper()
	s, err := groundtruth.New(cond, w, h, frames)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAccuracyOnGroundTruth(t *testing.T) {
	for cond, maxMean := range map[string]float64{"clean": 0.3, "fast-blur": 0.3, "rotate-noise-drift": 1.5} {
		t.Run(cond, func(t *testing.T) {
			s := scene(t, cond)
			var sum float64
			n := 0
			for f, pts := range run(t, s, tracker.Params{}) {
				truth := s.Truth(f)
				for k, p := range pts {
					if p.Lost {
						t.Fatalf("frame %d: marker %d lost while visible (confidence %.2f)", f, k, p.Confidence)
					}
					sum += math.Hypot(p.X-truth[k].X, p.Y-truth[k].Y)
					n++
				}
			}
			if mean := sum / float64(n); mean > maxMean {
				t.Fatalf("mean error %.3f px, want <= %.2f", mean, maxMean)
			} else {
				t.Logf("mean error %.3f px over %d points", mean, n)
			}
		})
	}
}

func TestOcclusionIsLostNeverInventedAndReacquired(t *testing.T) {
	s, err := groundtruth.New("occlusion", w, h, 100)
	if err != nil {
		t.Fatal(err)
	}
	hidden, lastHidden, reacquired := 0, -1, -1
	for f, pts := range run(t, s, tracker.Params{}) {
		cov := s.Truth(f)[0].Covered
		p := pts[0]
		if p.Lost && (p.X != 0 || p.Y != 0) {
			t.Fatalf("frame %d: a lost point has coordinates %v,%v", f, p.X, p.Y)
		}
		if p.Lost && (p.Confidence <= 0 || p.Confidence >= 1) {
			t.Errorf("frame %d: lost point's confidence %v not kept", f, p.Confidence)
		}
		if cov >= 0.75 {
			hidden++
			lastHidden = f
			if !p.Lost {
				t.Fatalf("frame %d: a point at %.1f,%.1f while the target is %.0f%% hidden", f, p.X, p.Y, 100*cov)
			}
		}
		if lastHidden >= 0 && reacquired < 0 && !p.Lost {
			reacquired = f
		}
		if cov == 0 && !p.Lost {
			tr := s.Truth(f)[0]
			if e := math.Hypot(p.X-tr.X, p.Y-tr.Y); e > 1 {
				t.Errorf("frame %d: error %.2f px", f, e)
			}
		}
	}
	if hidden < 3 {
		t.Fatalf("the target was hidden on %d frames only", hidden)
	}
	// Re-acquired within 5 frames of being less than a quarter hidden.
	visibleAgain := lastHidden + 1
	for s.Truth(visibleAgain)[0].Covered >= 0.25 {
		visibleAgain++
	}
	if reacquired < 0 || reacquired > visibleAgain+5 {
		t.Fatalf("re-acquired at frame %d, visible again at %d", reacquired, visibleAgain)
	}
}

// A trace cut into 10 segments, each restored from the bytes the previous
// one saved, gives the points of one uninterrupted run.
func TestSegmentsGiveTheSamePoints(t *testing.T) {
	s := scene(t, "rotate-noise-drift")
	whole := run(t, s, tracker.Params{})
	g := make([]byte, w*h)
	s.Render(0, g)
	trk, _, err := tracker.New(tracker.Params{}, g, w, h, starts(s))
	if err != nil {
		t.Fatal(err)
	}
	state, err := trk.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	f := 1
	for seg := range 10 {
		trk, err := tracker.Restore(state)
		if err != nil {
			t.Fatal(err)
		}
		for end := 1 + (frames-1)*(seg+1)/10; f < end; f++ {
			s.Render(f, g)
			pts, err := trk.Step(g)
			if err != nil {
				t.Fatal(err)
			}
			for k, p := range pts {
				q := whole[f][k]
				if p.Lost != q.Lost || math.Abs(p.X-q.X) > 0.01 || math.Abs(p.Y-q.Y) > 0.01 || math.Abs(p.Confidence-q.Confidence) > 1e-9 {
					t.Fatalf("segment %d, frame %d, marker %d: %+v, uninterrupted %+v", seg, f, k, p, q)
				}
			}
		}
		if state, err = trk.MarshalBinary(); err != nil {
			t.Fatal(err)
		}
	}
	if f != frames {
		t.Fatalf("segments covered %d frames", f)
	}
}

func TestBadInputs(t *testing.T) {
	g := make([]byte, 200*150)
	for name, c := range map[string]struct {
		p  tracker.Params
		g  []byte
		at [][2]float64
	}{
		"short frame":      {tracker.Params{}, g[:100], [][2]float64{{10, 10}}},
		"marker outside":   {tracker.Params{}, g, [][2]float64{{200, 10}}},
		"negative":         {tracker.Params{}, g, [][2]float64{{-0.5, 10}}},
		"NaN":              {tracker.Params{}, g, [][2]float64{{math.NaN(), 10}}},
		"huge template":    {tracker.Params{TemplateRadius: 1000}, g, nil},
		"rates over 1":     {tracker.Params{Evolve: 2}, g, nil},
		"confidence order": {tracker.Params{MinConfidence: 0.9, ReacquireConfidence: 0.5}, g, nil},
	} {
		if _, _, err := tracker.New(c.p, c.g, 200, 150, c.at); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	trk, pts, err := tracker.New(tracker.Params{}, g, 200, 150, [][2]float64{{0, 0}, {199, 149}})
	if err != nil || len(pts) != 2 || pts[1] != (tracker.Point{X: 199, Y: 149, Confidence: 1}) {
		t.Fatalf("%v %v", pts, err)
	}
	if _, err := trk.Step(g[:10]); !errors.Is(err, tracker.ErrFrameSize) {
		t.Fatalf("short frame: %v", err)
	}
	// A flat frame has nothing to match: lost, never a made-up position.
	pts, err = trk.Step(g)
	if err != nil || !pts[0].Lost || !pts[1].Lost {
		t.Fatalf("flat frame: %+v %v", pts, err)
	}
	state, _ := trk.MarshalBinary()
	for name, data := range map[string][]byte{
		"empty":     nil,
		"text":      []byte("hello tracker state"),
		"truncated": state[:len(state)-3],
		"longer":    append(bytes.Clone(state), 0),
		"version":   append([]byte("MTRK\x09\x00"), state[6:]...),
	} {
		if _, err := tracker.Restore(data); !errors.Is(err, tracker.ErrBadState) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzRestore(f *testing.F) {
	g := make([]byte, 40*30)
	for i := range g {
		g[i] = byte(i * 37)
	}
	trk, _, err := tracker.New(tracker.Params{TemplateRadius: 2, SearchRadius: 3}, g, 40, 30, [][2]float64{{5, 5}, {20.5, 10.25}})
	if err != nil {
		f.Fatal(err)
	}
	state, _ := trk.MarshalBinary()
	f.Add(state)
	f.Add([]byte("MTRK\x01\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := tracker.Restore(data)
		if err != nil {
			return
		}
		again, err := r.MarshalBinary()
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("restored state does not marshal back to its bytes")
		}
		if w, h := r.Size(); w*h <= 1<<16 {
			if _, err := r.Step(make([]byte, w*h)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

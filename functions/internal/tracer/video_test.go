package tracer_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/testkit/groundtruth"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// groundTruthClip encodes a ground-truth scene as H.264 (the lossy codec a
// camera gives) and returns its path and the scene.
func groundTruthClip(t *testing.T, cond string, frames int) (string, *groundtruth.Scene) {
	t.Helper()
	s, err := groundtruth.New(cond, 480, 270, frames)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), cond+".mp4")
	err = videotest.Encode(context.Background(), path, videotest.Options{Width: s.Width, Height: s.Height,
		FrameRate: 25, Frames: frames, Codec: videotest.H264}, s.Render)
	if err != nil {
		t.Fatal(err)
	}
	return path, s
}

// clipMovie is a movie of the scene with a marker on each target where it
// is on frame start (normalised).
func clipMovie(t *testing.T, s *groundtruth.Scene, start, interval int) domain.Movie {
	t.Helper()
	m, err := domain.NewMovie("clip-1", "Clip", s.Frames, 25, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	for k, tr := range s.Truth(start) {
		m.Settings.Markers = append(m.Settings.Markers, domain.Marker{ID: "t" + string(rune('a'+k)),
			X: (tr.X + 0.5) / float64(s.Width), Y: (tr.Y + 0.5) / float64(s.Height)})
	}
	m.Settings.Trim = domain.Trim{Start: start, End: s.Frames}
	m.Settings.CaptureInterval = interval
	m.CleanBefore = s.Frames
	return m
}

func plan(from, end, interval int) domain.TracePlan {
	return domain.TracePlan{From: from, End: end, Interval: interval, Frames: (end - from + interval - 1) / interval}
}

func fixed(path string) tracer.Source {
	return tracer.SourceFunc(func(context.Context, domain.Movie) (string, error) { return path, nil })
}

func TestVideoTracerFollowsTheGroundTruth(t *testing.T) {
	path, s := groundTruthClip(t, "clean", 45)
	m := clipMovie(t, s, 3, 2)
	tr, err := tracer.NewVideo(tracer.VideoOptions{Source: fixed(path)})
	if err != nil {
		t.Fatal(err)
	}
	p := domain.PlanTrace(m, domain.Lease{FromFrame: 3})
	frames, err := collect(t, tr, m, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != p.Frames || p.Frames != 21 {
		t.Fatalf("%d frames for a plan of %d", len(frames), p.Frames)
	}
	var sum float64
	n := 0
	for i, f := range frames {
		if f.Index != p.FrameAt(i) {
			t.Fatalf("frame %d has index %d", i, f.Index)
		}
		f.JobID = jobID
		if err := f.Validate(); err != nil {
			t.Fatal(err)
		}
		truth := s.Truth(f.Index)
		for k, pt := range f.Points {
			if pt.Lost || pt.Confidence < 0.5 {
				t.Fatalf("frame %d: %+v", f.Index, pt)
			}
			// Pixel coordinates from the top-left corner: the truth's pixel
			// centers are at +0.5.
			e := math.Hypot(pt.PX-(truth[k].X+0.5), pt.PY-(truth[k].Y+0.5))
			if d := math.Abs(pt.X*float64(s.Width) - pt.PX); d > 1e-9 {
				t.Fatalf("x %v and px %v disagree", pt.X, pt.PX)
			}
			sum += e
			n++
		}
	}
	if mean := sum / float64(n); mean > 0.3 {
		t.Fatalf("mean error %.3f px against the ground truth", mean)
	} else {
		t.Logf("mean error %.3f px over %d points (H.264 CRF 18)", mean, n)
	}
}

// A trace run as 10 segments (each a fresh tracer call from a later plan
// start, sharing only the saved states) gives the same points as one call.
func TestVideoTracerSegmentsMatchOneRun(t *testing.T) {
	path, s := groundTruthClip(t, "rotate-noise-drift", 41)
	m := clipMovie(t, s, 0, 1)
	whole, err := collect(t, mustVideo(t, path, nil), m, plan(0, 41, 1))
	if err != nil {
		t.Fatal(err)
	}
	states := &tracer.MemoryStates{}
	tr := mustVideo(t, path, states)
	var pieces []domain.Frame
	for seg := range 10 {
		from, end := seg*41/10, (seg+1)*41/10
		f, err := collect(t, tr, m, plan(from, end, 1))
		if err != nil {
			t.Fatal(err)
		}
		pieces = append(pieces, f...)
	}
	if states.Len() == 0 {
		t.Fatal("no state was saved")
	}
	if len(pieces) != len(whole) {
		t.Fatalf("%d frames in segments, %d in one run", len(pieces), len(whole))
	}
	for i := range whole {
		for k, a := range whole[i].Points {
			b := pieces[i].Points[k]
			if a.Lost != b.Lost || math.Abs(a.PX-b.PX) > 0.01 || math.Abs(a.PY-b.PY) > 0.01 {
				t.Fatalf("frame %d marker %s: one run %+v, segments %+v", whole[i].Index, a.MarkerID, a, b)
			}
		}
	}
	// Without saved states a later start re-tracks from the key frame: the
	// same points again.
	late, err := collect(t, mustVideo(t, path, nil), m, plan(30, 41, 1))
	if err != nil || late[0].Index != 30 || late[0].Points[0] != whole[30].Points[0] {
		t.Fatalf("%v %+v", err, late[0])
	}
}

func mustVideo(t *testing.T, path string, states tracer.States) *tracer.Video {
	t.Helper()
	tr, err := tracer.NewVideo(tracer.VideoOptions{Source: fixed(path), States: states, CheckpointEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestVideoTracerBadFiles(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.mp4")
	if err := os.WriteFile(text, []byte("not a movie"), 0o600); err != nil {
		t.Fatal(err)
	}
	path, s := groundTruthClip(t, "clean", 10)
	m := clipMovie(t, s, 0, 1)
	for name, c := range map[string]struct {
		src  string
		plan domain.TracePlan
		want string
	}{
		"text file":         {text, plan(0, 10, 1), "The movie's file is not a video the tracer can read."},
		"plan past the end": {path, plan(0, 12, 1), "The trace goes to frame 11 but the video has 10 frames."},
	} {
		_, err := collect(t, mustVideo(t, c.src, nil), m, c.plan)
		if got, ok := tracer.SummaryOf(err); !ok || got != c.want {
			t.Errorf("%s: %q (%v)", name, got, err)
		}
	}
	if _, err := tracer.NewVideo(tracer.VideoOptions{}); err == nil {
		t.Error("no source accepted")
	}
}

func TestFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	src := fixed("/nowhere.mp4")
	for name, c := range map[string]struct {
		getenv func(string) string
		src    tracer.Source
		want   string // "video", "synthetic" or "error"
	}{
		"video by default":       {env(), src, "video"},
		"synthetic asked":        {env(tracer.EnvTracer, "synthetic"), src, "synthetic"},
		"no source":              {env(), nil, "synthetic"},
		"video without a source": {env(tracer.EnvTracer, "video"), nil, "error"},
		"unknown":                {env(tracer.EnvTracer, "magic"), src, "error"},
		"bad synthetic setting":  {env(tracer.EnvTracer, "synthetic", tracer.EnvFrameDelay, "soon"), src, "error"},
	} {
		tr, err := tracer.FromEnv(c.getenv, tracer.VideoOptions{Source: c.src})
		got := "error"
		switch tr.(type) {
		case *tracer.Video:
			got = "video"
		case *tracer.Synthetic:
			got = "synthetic"
		}
		if got != c.want || (got == "error") != (err != nil) {
			t.Errorf("%s: %T %v, want %s", name, tr, err, c.want)
		}
	}
}

// A movie row carrying what the ingest probed (size, codec) is traced
// without probing again, to the same points.
func TestVideoTracerUsesTheIngestedSize(t *testing.T) {
	path, s := groundTruthClip(t, "clean", 12)
	m := clipMovie(t, s, 0, 1)
	probed, err := collect(t, mustVideo(t, path, nil), m, plan(0, 12, 1))
	if err != nil {
		t.Fatal(err)
	}
	m.Video = &domain.Video{Width: s.Width, Height: s.Height, Codec: "h264"}
	stored, err := collect(t, mustVideo(t, path, nil), m, plan(0, 12, 1))
	if err != nil || len(stored) != len(probed) {
		t.Fatalf("%d frames, %v", len(stored), err)
	}
	for i := range probed {
		for k := range probed[i].Points {
			if probed[i].Points[k] != stored[i].Points[k] {
				t.Fatalf("frame %d: %+v, probed %+v", i, stored[i].Points[k], probed[i].Points[k])
			}
		}
	}
	// A row promising more frames than the file holds: a truncated file.
	m.FrameCount = 20
	_, err = collect(t, mustVideo(t, path, nil), m, plan(0, 20, 1))
	if got, _ := tracer.SummaryOf(err); got != "The movie's file is truncated: the tracer could not read all its frames." {
		t.Fatalf("%q (%v)", got, err)
	}
}

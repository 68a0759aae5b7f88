package tracer_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
)

const jobID = "0123456789abcdef0123456789abcdef"

func movie(t *testing.T, frames int, trim domain.Trim, interval int) domain.Movie {
	t.Helper()
	m, err := domain.NewMovie("movie-1", "Movie", frames, 25, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "tip", X: 0.5, Y: 0.5}, {ID: "corner", X: 0, Y: 1}, {ID: "m3", X: 0.9, Y: 0.1}}
	m.Settings.Trim = trim
	m.Settings.CaptureInterval = interval
	return m
}

func collect(t *testing.T, tr tracer.Tracer, m domain.Movie, p domain.TracePlan) ([]domain.Frame, error) {
	t.Helper()
	var out []domain.Frame
	err := tr.Trace(context.Background(), m, p, func(f domain.Frame) error {
		out = append(out, f)
		return nil
	})
	return out, err
}

func TestSyntheticFollowsThePlan(t *testing.T) {
	m := movie(t, 1000, domain.Trim{Start: 100, End: 900}, 3)
	p := domain.PlanTrace(m, domain.Lease{FromFrame: 100})
	frames, err := collect(t, tracer.NewSynthetic(), m, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != p.Frames || p.Frames != 267 {
		t.Fatalf("%d frames, plan %+v", len(frames), p)
	}
	for i, f := range frames {
		if f.Index != p.FrameAt(i) {
			t.Fatalf("frame %d has index %d, want %d", i, f.Index, p.FrameAt(i))
		}
		f.JobID = jobID
		if err := f.Validate(); err != nil {
			t.Fatalf("frame %d: %v", f.Index, err)
		}
		if len(f.Points) != 3 || f.Points[0].MarkerID != "tip" || f.Points[2].MarkerID != "m3" {
			t.Fatalf("points %+v", f.Points)
		}
	}
	// Markers start where the user placed them.
	for k, mk := range m.Settings.Markers {
		if pt := frames[0].Points[k]; pt.X != mk.X || pt.Y != mk.Y {
			t.Errorf("marker %s starts at %v,%v, placed at %v,%v", mk.ID, pt.X, pt.Y, mk.X, mk.Y)
		}
	}
	// The motion is smooth (at most 0.15 * 2pi/90 per frame, times 3 frames)
	// and really moves.
	moved := false
	for i := 1; i < len(frames); i++ {
		for k := range frames[i].Points {
			a, b := frames[i-1].Points[k], frames[i].Points[k]
			if math.Abs(a.X-b.X) > 0.035 || math.Abs(a.Y-b.Y) > 0.035 {
				t.Fatalf("marker jumps from %+v to %+v", a, b)
			}
			moved = moved || a != b
		}
	}
	if !moved {
		t.Fatal("nothing moves")
	}
}

func TestSyntheticIsDeterministicAndRetracesIdentically(t *testing.T) {
	m := movie(t, 600, domain.Trim{Start: 0, End: 600}, 1)
	full, _ := collect(t, tracer.NewSynthetic(), m, domain.PlanTrace(m, domain.Lease{FromFrame: 0}))
	again, _ := collect(t, tracer.NewSynthetic(), m, domain.PlanTrace(m, domain.Lease{FromFrame: 0}))
	if !reflect.DeepEqual(full, again) {
		t.Fatal("two traces differ")
	}
	m.CleanBefore = 600
	tail, _ := collect(t, tracer.NewSynthetic(), m, domain.PlanTrace(m, domain.Lease{FromFrame: 250}))
	if len(tail) != 350 || !reflect.DeepEqual(tail, full[250:]) {
		t.Fatalf("a retrace from 250 differs from the full trace (%d frames)", len(tail))
	}
}

// The synthetic tracer honours key frames as the video tracer does: a
// marker placed on a later frame has no point before it, and a correction
// on frame k is the point on k, the path continues from it, and no frame
// before k changes.
func TestSyntheticHonoursKeyFrames(t *testing.T) {
	m := movie(t, 200, domain.Trim{Start: 10, End: 200}, 1)
	m.CleanBefore = 200
	before, _ := collect(t, tracer.NewSynthetic(), m, domain.PlanTrace(m, domain.Lease{FromFrame: 10}))
	m.Settings.Markers[2].Frame = 50
	m.Settings.Keys = []domain.Key{{MarkerID: "tip", Frame: 80, X: 0.2, Y: 0.3}}
	after, _ := collect(t, tracer.NewSynthetic(), m, domain.PlanTrace(m, domain.Lease{FromFrame: 10}))
	if len(after) != 190 || len(before) != 190 {
		t.Fatalf("%d and %d frames", len(before), len(after))
	}
	point := func(f domain.Frame, id string) (domain.Point, bool) {
		for _, p := range f.Points {
			if p.MarkerID == id {
				return p, true
			}
		}
		return domain.Point{}, false
	}
	for i, f := range after {
		idx := f.Index
		m3, has := point(f, "m3")
		if has != (idx >= 50) {
			t.Fatalf("frame %d: m3 placed on 50 has a point: %v", idx, has)
		}
		if idx == 50 && (m3.X != 0.9 || m3.Y != 0.1) {
			t.Errorf("m3 on its key frame is %v,%v, placed at 0.9,0.1", m3.X, m3.Y)
		}
		tip, _ := point(f, "tip")
		was, _ := point(before[i], "tip")
		switch {
		case idx < 80 && tip != was:
			t.Fatalf("frame %d before the correction changed: %+v, was %+v", idx, tip, was)
		case idx == 80 && (tip.X != 0.2 || tip.Y != 0.3):
			t.Fatalf("the corrected frame is %v,%v, want 0.2,0.3", tip.X, tip.Y)
		case idx > 80:
			prev, _ := point(after[i-1], "tip")
			if math.Abs(tip.X-prev.X) > 0.011 || math.Abs(tip.Y-prev.Y) > 0.011 || tip == was {
				t.Fatalf("frame %d: %+v does not continue from the correction (%+v before, %+v uncorrected)", idx, tip, prev, was)
			}
		}
		corner, _ := point(f, "corner")
		if old, _ := point(before[i], "corner"); corner != old {
			t.Fatalf("frame %d: the uncorrected marker moved: %+v, was %+v", idx, corner, old)
		}
	}
	m.CleanBefore = 80
	tail, _ := collect(t, tracer.NewSynthetic(), m, domain.PlanTrace(m, domain.Lease{FromFrame: 80}))
	if !reflect.DeepEqual(tail, after[70:]) {
		t.Fatal("a retrace from the key frame differs from the full trace")
	}
}

func TestSyntheticInjectedFailure(t *testing.T) {
	m := movie(t, 100, domain.Trim{Start: 0, End: 100}, 4)
	frames, err := collect(t, tracer.NewSynthetic(tracer.WithFailureAt(30)), m, domain.PlanTrace(m, domain.Lease{}))
	// Frames 0, 4, ..., 28 are emitted; 32 is the first at or after 30.
	if len(frames) != 8 || frames[7].Index != 28 {
		t.Fatalf("emitted %d frames before failing", len(frames))
	}
	summary, ok := tracer.SummaryOf(err)
	if !ok || summary != "The tracer failed at frame 32 (an injected test failure)." {
		t.Fatalf("summary %q (%v)", summary, err)
	}
	if domain.SanitizeSummary(summary) != summary {
		t.Errorf("summary %q is changed by sanitizing", summary)
	}
	var se *tracer.SafeError
	if !errors.As(err, &se) || se.Err == nil {
		t.Fatalf("no cause in %v", err)
	}
}

func TestSyntheticStopsWhenEmitOrContextSaysSo(t *testing.T) {
	m := movie(t, 100, domain.Trim{Start: 0, End: 100}, 1)
	p := domain.PlanTrace(m, domain.Lease{})
	stop := errors.New("lease lost")
	n := 0
	err := tracer.NewSynthetic().Trace(context.Background(), m, p, func(domain.Frame) error {
		n++
		if n == 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 5 {
		t.Fatalf("err %v after %d frames", err, n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	n = 0
	err = tracer.NewSynthetic(tracer.WithDelay(20*time.Millisecond)).Trace(ctx, m, p, func(domain.Frame) error {
		n++
		if n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 3 {
		t.Fatalf("err %v after %d frames", err, n)
	}
	if el := time.Since(start); el < 60*time.Millisecond || el > 2*time.Second {
		t.Errorf("3 frames at 20 ms took %v", el)
	}

	// A long delay is interrupted by the context.
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start = time.Now()
	err = tracer.NewSynthetic(tracer.WithDelay(time.Hour)).Trace(ctx, m, p, func(domain.Frame) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
}

func TestSyntheticFromEnv(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	if _, err := tracer.SyntheticFromEnv(env(nil)); err != nil {
		t.Fatal(err)
	}
	s, err := tracer.SyntheticFromEnv(env(map[string]string{tracer.EnvFailAt: "5", tracer.EnvFrameDelay: "1ms"}))
	if err != nil {
		t.Fatal(err)
	}
	m := movie(t, 10, domain.Trim{Start: 0, End: 10}, 1)
	frames, err := collect(t, s, m, domain.PlanTrace(m, domain.Lease{}))
	if len(frames) != 5 || err == nil {
		t.Fatalf("%d frames, %v", len(frames), err)
	}
	for _, bad := range []map[string]string{
		{tracer.EnvFrameDelay: "fast"}, {tracer.EnvFrameDelay: "-1s"}, {tracer.EnvFrameDelay: "2m"},
		{tracer.EnvFailAt: "x"}, {tracer.EnvFailAt: "-1"},
	} {
		if _, err := tracer.SyntheticFromEnv(env(bad)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestSafeError(t *testing.T) {
	cause := errors.New("open /var/task/model.bin: no such file")
	err := error(tracer.Safe("The tracing model could not be loaded.", cause))
	if err.Error() != "The tracing model could not be loaded.: open /var/task/model.bin: no such file" || !errors.Is(err, cause) {
		t.Fatalf("%v", err)
	}
	wrapped := errors.Join(errors.New("outer"), err)
	if s, ok := tracer.SummaryOf(wrapped); !ok || s != "The tracing model could not be loaded." {
		t.Fatalf("summary %q", s)
	}
	if _, ok := tracer.SummaryOf(cause); ok {
		t.Fatal("a plain error has a summary")
	}
	if _, ok := tracer.SummaryOf(tracer.Safe("", cause)); ok {
		t.Fatal("an empty summary counts")
	}
}

package tracer

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/envvar"
)

// Synthetic is the built-in deterministic tracer. It is synthetic: it reads
// no video and finds nothing. Each marker moves along a smooth
// Lissajous-like path whose periods, amplitudes and phases are derived from
// a hash of the marker's ID, clamped to the frame. It honours key frames as
// the video tracer does: a marker has no point before its first key frame
// (its placement, or the trim's first frame if that is later), and from
// each key frame on (a placement or a user's correction, domain.MarkerKeys)
// the path continues from the key's point, which is the point on that
// frame. The position on a frame depends only on the marker, its keys up to
// that frame, the trim start and the frame index, so a retrace from any
// frame reproduces exactly what a full trace wrote there, and a correction
// on frame k changes no frame before k.
//
// The zero value traces at full speed and never fails.
type Synthetic struct {
	delay  time.Duration
	failAt int
	fail   bool
}

var _ Tracer = (*Synthetic)(nil)

// Option configures a Synthetic tracer.
type Option func(*Synthetic)

// WithDelay makes the tracer wait d before each frame, so that a demo shows
// progress (it still stops as soon as the context is done).
func WithDelay(d time.Duration) Option { return func(s *Synthetic) { s.delay = max(d, 0) } }

// WithFailureAt makes the tracer fail, with a SafeError, instead of emitting
// the first planned frame whose index is at least frame: an injected failure
// for tests and demos of the failure path.
func WithFailureAt(frame int) Option {
	return func(s *Synthetic) { s.failAt, s.fail = frame, true }
}

// NewSynthetic returns a synthetic tracer with the options applied.
func NewSynthetic(opts ...Option) *Synthetic {
	s := &Synthetic{}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Environment variables SyntheticFromEnv reads.
const (
	EnvFrameDelay = envvar.TracerFrameDelay // a Go duration, e.g. "50ms"
	EnvFailAt     = envvar.TracerFailAtFrame
)

// SyntheticFromEnv builds the tracer from TRACER_FRAME_DELAY and
// TRACER_FAIL_AT_FRAME (both optional), read through getenv.
func SyntheticFromEnv(getenv func(string) string) (*Synthetic, error) {
	var opts []Option
	if v := getenv(EnvFrameDelay); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Minute {
			return nil, fmt.Errorf("tracer: %s=%q must be a duration of 0-1m", EnvFrameDelay, v)
		}
		opts = append(opts, WithDelay(d))
	}
	if v := getenv(EnvFailAt); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n >= domain.MaxFrameCount {
			return nil, fmt.Errorf("tracer: %s=%q must be a frame index", EnvFailAt, v)
		}
		opts = append(opts, WithFailureAt(n))
	}
	return NewSynthetic(opts...), nil
}

// Trace implements Tracer.
func (s *Synthetic) Trace(ctx context.Context, movie domain.Movie, plan domain.TracePlan, emit func(domain.Frame) error) error {
	start := movie.Settings.Trim.Start
	paths := make([]path, len(movie.Settings.Markers))
	for i, mk := range movie.Settings.Markers {
		paths[i] = newPath(mk)
		paths[i].keys = domain.MarkerKeys(movie.Settings, mk)
	}
	var timer *time.Timer
	for i := range plan.Frames {
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.delay > 0 {
			if timer == nil {
				timer = time.NewTimer(s.delay)
				defer timer.Stop()
			} else {
				timer.Reset(s.delay)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-timer.C:
			}
		}
		idx := plan.FrameAt(i)
		if s.fail && idx >= s.failAt {
			return Safe(fmt.Sprintf("The tracer failed at frame %d (an injected test failure).", idx),
				fmt.Errorf("synthetic tracer: injected failure at frame %d (configured for frame %d)", idx, s.failAt))
		}
		f := domain.Frame{Index: idx, Points: make([]domain.Point, 0, len(paths))}
		for _, p := range paths {
			if pt, ok := p.on(idx, start); ok {
				f.Points = append(f.Points, pt)
			}
		}
		if err := emit(f); err != nil {
			return err
		}
	}
	return nil
}

// path is one marker's synthetic motion.
type path struct {
	id             string
	x0, y0         float64
	ax, ay         float64 // amplitudes, 0.02-0.15 of the frame
	wx, wy         float64 // angular frequency per frame (periods of 90-600 frames)
	phaseX, phaseY float64
	keys           []domain.Key // by frame (domain.MarkerKeys)
}

func newPath(mk domain.Marker) path {
	h := fnv.New64a()
	_, _ = h.Write([]byte(mk.ID))
	seed := h.Sum64()
	unit := func(shift uint) float64 { return float64((seed>>shift)%1024) / 1023 }
	period := func(shift uint) float64 { return 90 + 510*unit(shift) }
	return path{
		id: mk.ID, x0: mk.X, y0: mk.Y,
		ax: 0.02 + 0.13*unit(0), ay: 0.02 + 0.13*unit(10),
		wx: 2 * math.Pi / period(20), wy: 2 * math.Pi / period(30),
		phaseX: 2 * math.Pi * unit(40), phaseY: 2 * math.Pi * unit(50),
	}
}

// on is the marker's point on frame idx of a trim starting at start: the
// path continued from its last key frame at or before idx (a key before the
// trim counts from the trim's first frame); none before its first key.
func (p path) on(idx, start int) (domain.Point, bool) {
	x0, y0, from, ok := p.x0, p.y0, start, len(p.keys) == 0
	for _, k := range p.keys {
		if f := max(k.Frame, start); f <= idx {
			x0, y0, from, ok = k.X, k.Y, f, true
		}
	}
	if !ok {
		return domain.Point{}, false
	}
	return p.from(x0, y0, from-start, idx-start), true
}

// from is the position t frames after the trim start of a path that is at
// (x0, y0) t0 frames after it.
func (p path) from(x0, y0 float64, t0, t int) domain.Point {
	f0, ft := float64(t0), float64(t)
	x := x0 + p.ax*(math.Sin(p.wx*ft+p.phaseX)-math.Sin(p.wx*f0+p.phaseX))
	y := y0 + p.ay*(math.Sin(p.wy*ft+p.phaseY)-math.Sin(p.wy*f0+p.phaseY))
	return domain.Point{MarkerID: p.id, X: clamp(x), Y: clamp(y), Confidence: 1}
}

func clamp(v float64) float64 { return min(max(v, 0), 1) }

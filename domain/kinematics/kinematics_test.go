package kinematics_test

import (
	"math"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/domain/kinematics"
)

const eps = 1e-9

// Accelerations of linear motion come out as rounding noise (1e-12).
const accEps = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) <= eps*math.Max(1, math.Abs(b)) }

func system(t *testing.T, c *domain.Calibration, w, h int) kinematics.System {
	t.Helper()
	s, err := kinematics.NewSystem(c, w, h)
	if err != nil {
		t.Fatalf("NewSystem: %v", err)
	}
	return s
}

// A 200 x 100 frame; the line from (0.1, 0.5) to (0.6, 0.5) is 100 px for
// 50 cm: 0.5 cm per pixel. Origin at pixel (100, 50).
func halfCm(angle float64, yUp bool) *domain.Calibration {
	return &domain.Calibration{Line: domain.Line{X1: 0.1, Y1: 0.5, X2: 0.6, Y2: 0.5}, Length: 50, Unit: domain.UnitCentimetre,
		OriginX: 0.5, OriginY: 0.5, Angle: angle, YUp: yUp}
}

func TestPosition(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      *domain.Calibration
		w, h   int
		nx, ny float64
		x, y   float64
		unit   string
	}{
		{name: "uncalibrated: pixels from the top-left, y down", w: 200, h: 100, nx: 0.25, ny: 0.75, x: 50, y: 75, unit: "px"},
		{name: "no calibration, no frame size: fractions", nx: 0.25, ny: 0.75, x: 0.25, y: 0.75, unit: "frame"},
		// Pixel (150, 20): 50 px right, 30 px up of the origin: 25 cm, 15 cm.
		{name: "calibrated, y up", c: halfCm(0, true), w: 200, h: 100, nx: 0.75, ny: 0.2, x: 25, y: 15, unit: "cm"},
		{name: "calibrated, y down", c: halfCm(0, false), w: 200, h: 100, nx: 0.75, ny: 0.2, x: 25, y: -15, unit: "cm"},
		// x axis at 90 degrees points up on screen; y (up) then points left.
		// 25 cm right, 15 cm up: x = 15, y = -25.
		{name: "x axis rotated 90 degrees", c: halfCm(90, true), w: 200, h: 100, nx: 0.75, ny: 0.2, x: 15, y: -25, unit: "cm"},
		// At 30 degrees: x = 25 cos30 + 15 sin30 = 21.6506... + 7.5,
		// y = -25 sin30 + 15 cos30 = -12.5 + 12.9903...
		{name: "x axis at 30 degrees", c: halfCm(30, true), w: 200, h: 100, nx: 0.75, ny: 0.2,
			x: 25*math.Sqrt(3)/2 + 7.5, y: -12.5 + 15*math.Sqrt(3)/2, unit: "cm"},
		{name: "the origin is (0, 0)", c: halfCm(30, false), w: 200, h: 100, nx: 0.5, ny: 0.5, x: 0, y: 0, unit: "cm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := system(t, tc.c, tc.w, tc.h)
			x, y := s.Position(tc.nx, tc.ny)
			if !near(x, tc.x) || !near(y, tc.y) || s.Unit() != tc.unit {
				t.Fatalf("Position = (%v, %v) %s, want (%v, %v) %s", x, y, s.Unit(), tc.x, tc.y, tc.unit)
			}
		})
	}
	if _, err := kinematics.NewSystem(&domain.Calibration{Line: domain.Line{X2: 0.5}, Length: 1, Unit: "m",
		YLine: domain.Line{X1: 0.1, X2: 0.6}, YLength: 1}, 100, 100); domain.ErrorCode(err) != domain.CodeInvalid {
		t.Fatalf("parallel lines: err %v, want invalid_input", err)
	}
}

// samples at 10 frames per second along x (normalised, 200-px frame).
func along(xs ...float64) []kinematics.Sample {
	out := make([]kinematics.Sample, len(xs))
	for i, x := range xs {
		out[i] = kinematics.Sample{Frame: i, T: float64(i) / 10, X: x, Y: 0.5}
		if math.IsNaN(x) {
			out[i] = kinematics.Sample{Frame: i, T: float64(i) / 10, Lost: true}
		}
	}
	return out
}

var lost = math.NaN()

func TestDerive(t *testing.T) {
	px := system(t, nil, 200, 100) // x in pixels: normalised * 200
	type want struct {
		known         bool
		x, disp, path float64
		hasV          bool
		vx, speed     float64
		hasA          bool
		ax            float64
	}
	for _, tc := range []struct {
		name    string
		samples []kinematics.Sample
		opt     kinematics.Options
		want    []want
	}{
		{
			// x = 0, 20, 60, 120 px at t = 0, .1, .2, .3 s.
			// v0 = (20-0)/.1 = 200 (forward); v1 = (60-0)/.2 = 300 (central);
			// v2 = (120-20)/.2 = 500; v3 = (120-60)/.1 = 600 (backward).
			// a: 2nd differences (60 - 40 + 0)/.01 = 2000 at 1 (central), at
			// 0 forward through 0,1,2: 2000; at 2: (120-120+20)/.01 = 2000; at 3
			// backward through 1,2,3: 2000.
			name: "uniform steps, accelerating", samples: along(0, 0.1, 0.3, 0.6),
			want: []want{
				{known: true, x: 0, hasV: true, vx: 200, speed: 200, hasA: true, ax: 2000},
				{known: true, x: 20, disp: 20, path: 20, hasV: true, vx: 300, speed: 300, hasA: true, ax: 2000},
				{known: true, x: 60, disp: 60, path: 60, hasV: true, vx: 500, speed: 500, hasA: true, ax: 2000},
				{known: true, x: 120, disp: 120, path: 120, hasV: true, vx: 600, speed: 600, hasA: true, ax: 2000},
			},
		},
		{
			// A lost sample splits the runs: 0 -> 20 (v = 200 both, one-sided,
			// no acceleration: runs of two), then 100 -> 80 (v = -200).
			// Path: 20, then nothing across the gap, then 20 more.
			// Displacement from x = 0.
			name: "a lost point is a gap", samples: along(0, 0.1, lost, 0.5, 0.4),
			want: []want{
				{known: true, x: 0, hasV: true, vx: 200, speed: 200},
				{known: true, x: 20, disp: 20, path: 20, hasV: true, vx: 200, speed: 200},
				{},
				{known: true, x: 100, disp: 100, path: 20, hasV: true, vx: -200, speed: 200},
				{known: true, x: 80, disp: 80, path: 40, hasV: true, vx: -200, speed: 200},
			},
		},
		{
			name: "an isolated point has no velocity", samples: along(lost, 0.5, lost),
			want: []want{{}, {known: true, x: 100}, {}},
		},
		{
			// Smoothing k=1 over 0, 30, 30, 60: ends keep their value (the
			// window shrinks to 1), inside (0+30+30)/3 = 20, (30+30+60)/3 = 40.
			// v: 200, (40-0)/.2 = 200, (60-20)/.2 = 200, 200.
			name: "smoothing averages over a centred window", samples: along(0, 0.15, 0.15, 0.3), opt: kinematics.Options{Smooth: 1},
			want: []want{
				{known: true, x: 0, hasV: true, vx: 200, speed: 200, hasA: true, ax: 0},
				{known: true, x: 20, disp: 20, path: 20, hasV: true, vx: 200, speed: 200, hasA: true, ax: 0},
				{known: true, x: 40, disp: 40, path: 40, hasV: true, vx: 200, speed: 200, hasA: true, ax: 0},
				{known: true, x: 60, disp: 60, path: 60, hasV: true, vx: 200, speed: 200, hasA: true, ax: 0},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := kinematics.Derive(tc.samples, px, tc.opt)
			for i, w := range tc.want {
				r := rows[i]
				ok := r.Known == w.known && near(r.X, w.x) && near(r.Displacement, w.disp) && near(r.Path, w.path) &&
					r.HasVelocity == w.hasV && near(r.VX, w.vx) && near(r.Speed, w.speed) && r.HasAcceleration == w.hasA && near(r.AX, w.ax)
				if !ok {
					t.Errorf("row %d = %+v, want %+v", i, r, w)
				}
			}
		})
	}
}

func TestDeriveOnUnevenTimes(t *testing.T) {
	// x = t² sampled at t = 0, 0.1, 0.3 (a dropped frame, real timestamps):
	// the three-point formula is exact for a parabola: v(0.1) = 0.2,
	// a = 2 everywhere. Frame units: no calibration, no size.
	s := system(t, nil, 0, 0)
	samples := []kinematics.Sample{{Frame: 0, T: 0, X: 0}, {Frame: 1, T: 0.1, X: 0.01}, {Frame: 3, T: 0.3, X: 0.09}}
	rows := kinematics.Derive(samples, s, kinematics.Options{})
	if !near(rows[1].VX, 0.2) || !near(rows[1].AX, 2) || !near(rows[0].AX, 2) || !near(rows[2].AX, 2) {
		t.Fatalf("v(0.1) = %v, a = %v %v %v; want 0.2 and 2", rows[1].VX, rows[0].AX, rows[1].AX, rows[2].AX)
	}
	// With Step 1, frame 3 is no neighbour of frame 1: a gap.
	rows = kinematics.Derive(samples, s, kinematics.Options{Step: 1})
	if rows[2].HasVelocity || !near(rows[1].VX, 0.1) {
		t.Fatalf("with Step 1: v = %v, last has velocity %v; want 0.1 (one-sided) and none", rows[1].VX, rows[2].HasVelocity)
	}
	// Times that do not increase link nothing.
	rows = kinematics.Derive([]kinematics.Sample{{T: 1, X: 0.1}, {Frame: 1, T: 1, X: 0.2}}, s, kinematics.Options{})
	if rows[0].HasVelocity || rows[1].HasVelocity {
		t.Fatal("samples at the same time were differenced")
	}
}

func TestCalibratedSpeed(t *testing.T) {
	// 0.5 cm per pixel on a 200 x 100 frame; a marker moving 10 px right and
	// 10 px up per 0.1 s: 5 cm and 5 cm per 0.1 s = sqrt(50²+50²) = 70.71 cm/s.
	s := system(t, halfCm(0, true), 200, 100)
	samples := []kinematics.Sample{{T: 0, X: 0.5, Y: 0.5}, {Frame: 1, T: 0.1, X: 0.55, Y: 0.4}, {Frame: 2, T: 0.2, X: 0.6, Y: 0.3}}
	rows := kinematics.Derive(samples, s, kinematics.Options{Step: 1})
	for _, r := range rows {
		if !near(r.VX, 50) || !near(r.VY, 50) || !near(r.Speed, 50*math.Sqrt2) || r.Acceleration > accEps {
			t.Fatalf("row %+v: want v = (50, 50) cm/s, speed 70.71, no acceleration", r)
		}
	}
	if !near(rows[2].X, 10) || !near(rows[2].Y, 10) || !near(rows[2].Path, 10*math.Sqrt2) {
		t.Fatalf("last row %+v: want (10, 10) cm, path 14.14", rows[2])
	}
}

func TestSummarize(t *testing.T) {
	px := system(t, nil, 200, 100)
	samples := along(0, 0.1, lost, lost, 0.5, 0.4)
	samples[5].Uncertain = true
	rows := kinematics.Derive(samples, px, kinematics.Options{})
	got := kinematics.Summarize(samples, rows)
	// Known: 0, 20 (a run of two, v = 200 each), 100 alone (no velocity).
	// Lost 2, uncertain 1: shares 0.1 + 0.1 + 0.1 (the last, a whole step).
	want := kinematics.Summary{Samples: 6, Lost: 2, Uncertain: 1, Distance: 20, MeanSpeed: 200, MaxSpeed: 200, TimeLost: 0.3, Duration: 0.5}
	if got.Samples != want.Samples || got.Lost != want.Lost || got.Uncertain != want.Uncertain || !near(got.Distance, want.Distance) ||
		!near(got.MeanSpeed, want.MeanSpeed) || !near(got.MaxSpeed, want.MaxSpeed) || !near(got.TimeLost, want.TimeLost) || !near(got.Duration, want.Duration) {
		t.Fatalf("Summarize = %+v, want %+v", got, want)
	}
	if s := kinematics.Summarize(nil, nil); s != (kinematics.Summary{}) {
		t.Fatalf("no samples: %+v", s)
	}
}

package domain_test

import (
	"math"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// cal is a valid calibration: a horizontal line across half a frame, 2 m.
func cal() domain.Calibration {
	return domain.Calibration{
		Frame: 0, Line: domain.Line{X1: 0.25, Y1: 0.5, X2: 0.75, Y2: 0.5}, Length: 2, Unit: domain.UnitMetre,
		OriginX: 0.5, OriginY: 0.5, YUp: true,
	}
}

func calWith(f func(*domain.Calibration)) domain.Calibration {
	c := cal()
	f(&c)
	return c
}

func TestEditCalibration(t *testing.T) {
	mine := with(analysing(t, leaseA, alice, t0), cleanBefore(500))
	edit := func(c domain.Calibration) domain.EditCalibration {
		return domain.EditCalibration{LeaseID: leaseA, UserID: alice.ID, Now: at(time.Second), Calibration: c}
	}
	calibrated := exec(t, mine, edit(cal()))
	cases := guardCases(t, func(id string, now time.Time) domain.Command {
		return domain.EditCalibration{LeaseID: id, Now: now, Calibration: cal()}
	})
	inf := math.Inf(1)
	cases = append(cases,
		cmdCase{
			name: "the holder calibrates; the clean range stays: recalibrating retraces nothing", movie: mine, cmd: edit(cal()),
			check: func(t *testing.T, before, after domain.Movie) {
				if after.Calibration == nil || *after.Calibration != cal() {
					t.Fatalf("calibration %+v, want %+v", after.Calibration, cal())
				}
				if after.CleanBefore != before.CleanBefore {
					t.Fatalf("CleanBefore %d, want %d kept", after.CleanBefore, before.CleanBefore)
				}
				leaseUnchanged(t, before, after)
			},
		},
		cmdCase{name: "the same calibration again writes nothing", movie: calibrated, cmd: edit(cal()), replay: true},
		cmdCase{name: "a recalibration with another length is a change", movie: calibrated, cmd: edit(calWith(func(c *domain.Calibration) { c.Length = 3 })),
			check: func(t *testing.T, _, after domain.Movie) {
				if after.Calibration.Length != 3 {
					t.Fatalf("length %v", after.Calibration.Length)
				}
			}},
		cmdCase{name: "another user's edit with the lease ID is refused", movie: mine, code: domain.CodeLeaseHeld, holder: storedHolder,
			cmd: domain.EditCalibration{LeaseID: leaseA, UserID: bob.ID, Now: at(time.Second), Calibration: cal()}},
		cmdCase{name: "a second axis line is accepted", movie: mine, cmd: edit(calWith(func(c *domain.Calibration) {
			c.YLine, c.YLength = domain.Line{X1: 0.5, Y1: 0.2, X2: 0.5, Y2: 0.8}, 1.5
		}))},
		cmdCase{name: "a frame beyond the movie is invalid", movie: mine, cmd: edit(calWith(func(c *domain.Calibration) { c.Frame = 1000 })), code: domain.CodeInvalid, field: "frame"},
		cmdCase{name: "the last frame is accepted", movie: mine, cmd: edit(calWith(func(c *domain.Calibration) { c.Frame = 999 }))},
	)
	garbage := map[string]struct {
		f     func(*domain.Calibration)
		field string
	}{
		"a zero-length line":              {func(c *domain.Calibration) { c.Line.X2, c.Line.Y2 = c.Line.X1, c.Line.Y1 }, "line"},
		"a line shorter than the minimum": {func(c *domain.Calibration) { c.Line.X2 = c.Line.X1 + 0.004 }, "line"},
		"a line end off the frame":        {func(c *domain.Calibration) { c.Line.X2 = 1.2 }, "line"},
		"a NaN line end":                  {func(c *domain.Calibration) { c.Line.Y1 = math.NaN() }, "line"},
		"an infinite line end":            {func(c *domain.Calibration) { c.Line.X1 = inf }, "line"},
		"a zero length":                   {func(c *domain.Calibration) { c.Length = 0 }, "lineLength"},
		"a negative length":               {func(c *domain.Calibration) { c.Length = -2 }, "lineLength"},
		"an absurd length":                {func(c *domain.Calibration) { c.Length = 1e7 }, "lineLength"},
		"an infinite length":              {func(c *domain.Calibration) { c.Length = inf }, "lineLength"},
		"a NaN length":                    {func(c *domain.Calibration) { c.Length = math.NaN() }, "lineLength"},
		"an unknown unit":                 {func(c *domain.Calibration) { c.Unit = "furlong" }, "unit"},
		"no unit":                         {func(c *domain.Calibration) { c.Unit = "" }, "unit"},
		"an origin left of the frame":     {func(c *domain.Calibration) { c.OriginX = -0.01 }, "origin"},
		"an origin below the frame":       {func(c *domain.Calibration) { c.OriginY = 1.5 }, "origin"},
		"a NaN origin":                    {func(c *domain.Calibration) { c.OriginY = math.NaN() }, "origin"},
		"an angle beyond a turn":          {func(c *domain.Calibration) { c.Angle = 361 }, "angle"},
		"an infinite angle":               {func(c *domain.Calibration) { c.Angle = -inf }, "angle"},
		"a negative frame":                {func(c *domain.Calibration) { c.Frame = -1 }, "frame"},
		"a second line without a length":  {func(c *domain.Calibration) { c.YLine = domain.Line{X1: 0.1, Y1: 0.1, X2: 0.1, Y2: 0.9} }, "yLineLength"},
		"a second length without a line":  {func(c *domain.Calibration) { c.YLength = 1 }, "yLine"},
		"a negative second length": {func(c *domain.Calibration) {
			c.YLine, c.YLength = domain.Line{X1: 0.1, Y1: 0.1, X2: 0.1, Y2: 0.9}, -1
		}, "yLineLength"},
	}
	for name, g := range garbage {
		cases = append(cases, cmdCase{name: name + " is invalid", movie: mine, cmd: edit(calWith(g.f)), code: domain.CodeInvalid, field: g.field})
	}
	runCases(t, cases)
}

func TestClearCalibration(t *testing.T) {
	mine := analysing(t, leaseA, alice, t0)
	calibrated := exec(t, mine, domain.EditCalibration{LeaseID: leaseA, Now: at(ms), Calibration: cal()})
	cases := guardCases(t, func(id string, now time.Time) domain.Command {
		return domain.ClearCalibration{LeaseID: id, Now: now}
	})
	// guardCases run on uncalibrated movies, where an accepted clear is a
	// no-op; keep only the refusals and check the clear itself below.
	var refusals []cmdCase
	for _, c := range cases {
		if c.code != "" {
			refusals = append(refusals, c)
		}
	}
	refusals = append(refusals,
		cmdCase{name: "the holder clears the calibration", movie: calibrated, cmd: domain.ClearCalibration{LeaseID: leaseA, Now: at(2 * ms)},
			check: func(t *testing.T, _, after domain.Movie) {
				if after.Calibration != nil {
					t.Fatalf("calibration %+v after clearing", after.Calibration)
				}
			}},
		cmdCase{name: "clearing an uncalibrated movie writes nothing", movie: mine, cmd: domain.ClearCalibration{LeaseID: leaseA, Now: at(2 * ms)}, replay: true},
	)
	runCases(t, refusals)
}

func TestCalibrationScales(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }
	for _, tc := range []struct {
		name  string
		c     domain.Calibration
		w, h  int
		a, b  float64
		field string
	}{
		// Half of a 640-pixel width is 320 pixels for 2 m: 1/160 m per pixel.
		{name: "one horizontal line", c: cal(), w: 640, h: 480, a: 2.0 / 320, b: 2.0 / 320},
		// A 3-4-5 diagonal: (0.3*1000, 0.4*1000) = 500 px for 5 cm.
		{name: "one diagonal line", c: calWith(func(c *domain.Calibration) {
			c.Line, c.Length, c.Unit = domain.Line{X1: 0.1, Y1: 0.1, X2: 0.4, Y2: 0.5}, 5, domain.UnitCentimetre
		}), w: 1000, h: 1000, a: 0.01, b: 0.01},
		// Horizontal 320 px = 2 m, vertical 0.6*480 = 288 px = 1.44 m: 0.005 m per pixel in y.
		{name: "two lines, non-square pixels", c: calWith(func(c *domain.Calibration) {
			c.YLine, c.YLength = domain.Line{X1: 0.5, Y1: 0.2, X2: 0.5, Y2: 0.8}, 1.44
		}), w: 640, h: 480, a: 2.0 / 320, b: 0.005},
		// Two diagonals: a = 0.01, b = 0.02 per pixel. Line 1 (300, 400) px:
		// sqrt(3^2 + 8^2) = 8.5440037...; line 2 (400, -300) px: sqrt(4^2 + 6^2).
		{name: "two diagonal lines", c: calWith(func(c *domain.Calibration) {
			c.Line, c.Length = domain.Line{X1: 0.1, Y1: 0.1, X2: 0.4, Y2: 0.5}, math.Sqrt(9+64)
			c.YLine, c.YLength = domain.Line{X1: 0.5, Y1: 0.9, X2: 0.9, Y2: 0.6}, math.Sqrt(16+36)
		}), w: 1000, h: 1000, a: 0.01, b: 0.02},
		{name: "two parallel lines", c: calWith(func(c *domain.Calibration) {
			c.YLine, c.YLength = domain.Line{X1: 0.25, Y1: 0.7, X2: 0.75, Y2: 0.7}, 2
		}), w: 640, h: 480, field: "yLine"},
		{name: "two lines whose lengths contradict", c: calWith(func(c *domain.Calibration) {
			c.Line, c.Length = domain.Line{X1: 0.1, Y1: 0.1, X2: 0.4, Y2: 0.5}, 1
			c.YLine, c.YLength = domain.Line{X1: 0.1, Y1: 0.1, X2: 0.7, Y2: 0.2}, 100
		}), w: 1000, h: 1000, field: "yLine"},
		{name: "an unknown frame size", c: cal(), w: 0, h: 480, field: "video"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			if tc.field == "yLine" {
				RequireCode(t, err, domain.CodeInvalid, tc.field)
				return
			}
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			a, b, err := tc.c.Scales(tc.w, tc.h)
			if tc.field != "" {
				RequireCode(t, err, domain.CodeInvalid, tc.field)
				return
			}
			if err != nil || !near(a, tc.a) || !near(b, tc.b) {
				t.Fatalf("Scales = %v, %v, %v; want %v, %v", a, b, err, tc.a, tc.b)
			}
		})
	}
}

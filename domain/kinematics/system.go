// Package kinematics derives what a scientist measures from traced points:
// positions in a calibrated coordinate system, displacement, path length,
// velocity, speed and acceleration over time, and a summary per marker. It
// is the one place these are computed (the API's exports and the page's
// plots both read its results); it is pure: standard library and the
// domain's values only, no clock, no I/O.
//
// # Coordinate system
//
// Without a calibration, positions are in pixels of the frame (unit "px"),
// from the frame's top-left corner, x right and y down: the image's own
// coordinates. With a domain.Calibration, a pixel (px, py) is first scaled
// per image axis (a, b from Calibration.Scales) relative to the origin,
// u = a (px - ox), w = -b (py - oy) (w points up on screen), then
// projected on the axes: x = u cos θ + w sin θ along the x axis at angle θ
// (counter-clockwise from rightward), y = -u sin θ + w cos θ when y is up
// (90 degrees counter-clockwise of x), its negative when y is down.
package kinematics

import (
	"math"

	"github.com/movietrace/tracinglocks/domain"
)

// UnitPixel is the unit of an uncalibrated movie's positions.
const UnitPixel = "px"

// UnitFrame is the unit of positions when neither a calibration nor the
// frame size is known: fractions of the frame's width and height.
const UnitFrame = "frame"

// System maps normalised frame coordinates to positions. Build it with
// NewSystem; the zero System is invalid.
type System struct {
	w, h       float64 // frame size in pixels (1, 1 for UnitFrame)
	a, b       float64 // length per pixel along the image's x and y
	ox, oy     float64 // origin, pixels
	cos, sin   float64
	yUp        bool
	unit       string
	calibrated bool
}

// NewSystem returns the coordinate system of a movie: its calibration (nil:
// none) on frames of w x h pixels (0: unknown). A calibration whose lines
// give no scales on this frame size (domain.Calibration.Scales) is an error.
func NewSystem(c *domain.Calibration, w, h int) (System, error) {
	if c == nil {
		if w <= 0 || h <= 0 {
			return System{w: 1, h: 1, a: 1, b: 1, cos: 1, unit: UnitFrame}, nil
		}
		return System{w: float64(w), h: float64(h), a: 1, b: 1, cos: 1, unit: UnitPixel}, nil
	}
	a, b, err := c.Scales(w, h)
	if err != nil {
		return System{}, err
	}
	rad := c.Angle * math.Pi / 180
	return System{
		w: float64(w), h: float64(h), a: a, b: b,
		ox: c.OriginX * float64(w), oy: c.OriginY * float64(h),
		cos: math.Cos(rad), sin: math.Sin(rad), yUp: c.YUp, unit: string(c.Unit), calibrated: true,
	}, nil
}

// Unit is the unit of positions ("px", "frame" or a domain.Unit).
func (s System) Unit() string { return s.unit }

// Calibrated reports whether positions are in a calibrated unit.
func (s System) Calibrated() bool { return s.calibrated }

// Position maps a point in normalised frame coordinates (x, y in [0, 1] of
// the width and height) to the system's coordinates.
func (s System) Position(nx, ny float64) (x, y float64) {
	px, py := nx*s.w, ny*s.h
	if !s.calibrated {
		return px, py
	}
	u, w := s.a*(px-s.ox), -s.b*(py-s.oy)
	x = u*s.cos + w*s.sin
	y = -u*s.sin + w*s.cos
	if !s.yUp {
		y = -y
	}
	return x, y
}

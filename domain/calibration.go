package domain

import (
	"math"
	"time"
)

// A calibration turns a movie's pixels into lengths in a unit and places a
// coordinate system on the frame. It is a fact decided by the user who holds
// the analysis lease and recorded on the movie row when decided; every
// derived quantity (domain/kinematics) reads it from there, so recalibrating
// changes every derived value at once and retraces nothing.
//
// Coordinates are normalised to [0, 1] of the frame's width and height, the
// space of markers and points; the frame's size in pixels (Movie.Video)
// turns them into pixels when a scale is computed.

// Unit is a closed set of length units.
type Unit string

const (
	UnitMicrometre Unit = "um"
	UnitMillimetre Unit = "mm"
	UnitCentimetre Unit = "cm"
	UnitMetre      Unit = "m"
	UnitKilometre  Unit = "km"
	UnitInch       Unit = "in"
	UnitFoot       Unit = "ft"
)

// Units lists every unit a calibration may use.
var Units = []Unit{UnitMicrometre, UnitMillimetre, UnitCentimetre, UnitMetre, UnitKilometre, UnitInch, UnitFoot}

// Valid reports whether u is one of Units.
func (u Unit) Valid() bool {
	for _, k := range Units {
		if u == k {
			return true
		}
	}
	return false
}

// Limits of a calibration.
const (
	// MaxCalibrationLength bounds a known length (in its unit): a longer
	// one is a typing error, not a measurement.
	MaxCalibrationLength = 1e6
	// MinCalibrationLength is the smallest known length accepted.
	MinCalibrationLength = 1e-6
	// MinCalibrationLine is the shortest calibration line, in normalised
	// frame coordinates (0.5% of the frame: 3 pixels on a 640-pixel frame).
	// A shorter line cannot be drawn precisely enough to calibrate anything.
	MinCalibrationLine = 0.005
	// MinAxisDeterminant: two calibration lines whose directions are this
	// close to parallel (|sin| of the angle between them, squared and
	// weighted, see Scales) do not determine two scales.
	MinAxisDeterminant = 1e-3
)

// Line is a segment on a frame from (X1, Y1) to (X2, Y2), normalised.
type Line struct {
	X1, Y1, X2, Y2 float64
}

// Calibration is a movie's scale and coordinate system.
//
// Line, of known Length in Unit, sets the scale. With YLine (YLength > 0),
// the two lines set two scales, one per image axis, for pixels that are not
// square (see Scales). Origin (OriginX, OriginY) is the point (0, 0);
// Angle is the direction of the x axis, in degrees counter-clockwise from
// the frame's rightward direction as seen on screen; YUp says the y axis
// points 90 degrees counter-clockwise of x (up on screen when Angle is 0),
// else clockwise (down, as image rows go). Frame is the frame the lines were
// drawn on (informative: a calibration holds for the whole movie).
//
// A Calibration is a comparable value: two equal calibrations are the same
// decision, which is how a retried or no-op edit is recognised.
type Calibration struct {
	Frame            int
	Line             Line
	Length           float64
	Unit             Unit
	YLine            Line
	YLength          float64 // 0: no second line
	OriginX, OriginY float64
	Angle            float64
	YUp              bool
}

// HasYLine reports whether the calibration has a second line.
func (c Calibration) HasYLine() bool { return c.YLength != 0 }

func finite(fs ...float64) bool {
	for _, f := range fs {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
	}
	return true
}

func lineLength(l Line) float64 { return math.Hypot(l.X2-l.X1, l.Y2-l.Y1) }

func validateLine(field string, l Line, length float64) error {
	switch {
	case !finite(l.X1, l.Y1, l.X2, l.Y2) || !unit(l.X1) || !unit(l.Y1) || !unit(l.X2) || !unit(l.Y2):
		return Invalid(field, "the line's ends must lie on the frame (coordinates within [0, 1])")
	case lineLength(l) < MinCalibrationLine:
		return Invalid(field, "the line is too short to calibrate (at least %g of the frame)", MinCalibrationLine)
	case !finite(length) || length < MinCalibrationLength || length > MaxCalibrationLength:
		return Invalid(field+"Length", "the known length must be between %g and %g", MinCalibrationLength, MaxCalibrationLength)
	}
	return nil
}

// Validate checks a calibration on its own: lines on the frame and long
// enough, known lengths positive, finite and not absurd, a known unit, the
// origin on the frame, a finite angle within [-360, 360], a frame index of a
// movie, two lines that determine two scales. That Frame lies in the movie
// is the edit's precondition (only the row knows FrameCount).
func (c Calibration) Validate() error {
	if err := validateLine("line", c.Line, c.Length); err != nil {
		return err
	}
	if c.YLength != 0 || c.YLine != (Line{}) {
		if err := validateLine("yLine", c.YLine, c.YLength); err != nil {
			return err
		}
		if err := c.validateAxes(); err != nil {
			return err
		}
	}
	switch {
	case !c.Unit.Valid():
		return Invalid("unit", "must be one of um, mm, cm, m, km, in, ft")
	case !finite(c.OriginX, c.OriginY) || !unit(c.OriginX) || !unit(c.OriginY):
		return Invalid("origin", "the origin must lie on the frame (coordinates within [0, 1])")
	case !finite(c.Angle) || c.Angle < -360 || c.Angle > 360:
		return Invalid("angle", "must be a number of degrees within [-360, 360]")
	case c.Frame < 0 || c.Frame >= MaxFrameCount:
		return Invalid("frame", "must be 0-%d", MaxFrameCount-1)
	}
	return nil
}

// Scales returns the length per pixel along the image's x (a) and y (b)
// axes for a frame of w x h pixels. One line: a = b = Length / its length
// in pixels. Two lines with pixel extents (dx1, dy1) and (dx2, dy2):
// Length^2 = a^2 dx1^2 + b^2 dy1^2 and YLength^2 = a^2 dx2^2 + b^2 dy2^2,
// solved for a^2 and b^2 (Cramer's rule). Whether the two lines determine
// two positive scales does not depend on the frame size (scaling an axis
// scales the determinant and both numerators alike), so Validate decides it
// once on normalised coordinates; Scales refuses only an unknown frame size.
func (c Calibration) Scales(w, h int) (a, b float64, err error) {
	if w <= 0 || h <= 0 {
		return 0, 0, Invalid("video", "the frame size is unknown")
	}
	a, b, err = c.scales(float64(w), float64(h))
	return a, b, err
}

func (c Calibration) scales(w, h float64) (a, b float64, err error) {
	dx1, dy1 := (c.Line.X2-c.Line.X1)*w, (c.Line.Y2-c.Line.Y1)*h
	if !c.HasYLine() {
		s := c.Length / math.Hypot(dx1, dy1)
		return s, s, nil
	}
	dx2, dy2 := (c.YLine.X2-c.YLine.X1)*w, (c.YLine.Y2-c.YLine.Y1)*h
	p1, q1, p2, q2 := dx1*dx1, dy1*dy1, dx2*dx2, dy2*dy2
	det := p1*q2 - p2*q1
	l1, l2 := c.Length*c.Length, c.YLength*c.YLength
	a2, b2 := (l1*q2-l2*q1)/det, (p1*l2-p2*l1)/det
	if det == 0 || !(a2 > 0) || !(b2 > 0) || math.IsInf(a2, 0) || math.IsInf(b2, 0) {
		return 0, 0, Invalid("yLine", "the two lengths contradict each other on these lines")
	}
	return math.Sqrt(a2), math.Sqrt(b2), nil
}

// validateAxes checks, on normalised coordinates, that two lines determine
// two scales: their directions clearly differ (|det| relative to the
// product of their squared lengths, 0 for parallel or mirror-image lines,
// 1 for a horizontal and a vertical line, at least MinAxisDeterminant) and
// the lengths give positive squared scales.
func (c Calibration) validateAxes() error {
	nx1, ny1 := c.Line.X2-c.Line.X1, c.Line.Y2-c.Line.Y1
	nx2, ny2 := c.YLine.X2-c.YLine.X1, c.YLine.Y2-c.YLine.Y1
	p1, q1, p2, q2 := nx1*nx1, ny1*ny1, nx2*nx2, ny2*ny2
	if math.Abs(p1*q2-p2*q1)/((p1+q1)*(p2+q2)) < MinAxisDeterminant {
		return Invalid("yLine", "the two lines must run in clearly different directions (e.g. one horizontal, one vertical)")
	}
	_, _, err := c.scales(1, 1)
	return err
}

// Analysis fields of a calibration.
const (
	// FieldCalibration is the movie's calibration, absent when it has none.
	FieldCalibration Field = "Calibration"
)

// EditCalibration sets the movie's calibration.
//
// Precondition: editGuard, and the calibration differs from the stored one.
// The traced points do not change (they are in pixels and normalised
// coordinates), so CleanBefore stays: recalibrating retraces nothing. A
// no-op edit (the same calibration) is a success that writes nothing.
type EditCalibration struct {
	LeaseID     string
	UserID      string // when set, must be the lease's user
	Now         time.Time
	Calibration Calibration
}

func (c EditCalibration) Validate() error {
	return firstError(validateLeaseID("leaseId", c.LeaseID), c.Calibration.Validate())
}

func (c EditCalibration) same() Cond { return Cmp(FieldCalibration, OpEq, c.Calibration) }

func (c EditCalibration) Precondition() []Clause {
	return []Clause{
		editGuard(c.LeaseID, c.UserID, c.Now),
		{If: Cmp(FieldFrameCount, OpGt, c.Calibration.Frame), Else: func(m Movie) error {
			return Invalid("frame", "must be a frame of the movie's %d frames", m.FrameCount)
		}},
		unchanged(c.same()),
	}
}

// AlreadyApplied: the caller holds the lease and the calibration is already
// this one.
func (c EditCalibration) AlreadyApplied() Cond {
	return And{heldBy(c.LeaseID, c.UserID, c.Now), c.same()}
}

func (c EditCalibration) Update() []Assignment {
	return changed(c.Now, Set(FieldCalibration, c.Calibration), Set(FieldLeaseEditedAt, c.Now))
}

// ClearCalibration removes the movie's calibration: results are in pixels
// again. Precondition: editGuard, and a calibration is stored; clearing an
// uncalibrated movie is a no-op success.
type ClearCalibration struct {
	LeaseID string
	UserID  string // when set, must be the lease's user
	Now     time.Time
}

func (c ClearCalibration) Validate() error { return validateLeaseID("leaseId", c.LeaseID) }

func (c ClearCalibration) Precondition() []Clause {
	return []Clause{editGuard(c.LeaseID, c.UserID, c.Now), unchanged(Absent{FieldCalibration})}
}

// AlreadyApplied: the caller holds the lease and there is no calibration.
func (c ClearCalibration) AlreadyApplied() Cond {
	return And{heldBy(c.LeaseID, c.UserID, c.Now), Absent{FieldCalibration}}
}

func (c ClearCalibration) Update() []Assignment {
	return changed(c.Now, Remove(FieldCalibration), Set(FieldLeaseEditedAt, c.Now))
}

package schema

import "github.com/movietrace/tracinglocks/domain"

// LineItem is a stored calibration line, normalised frame coordinates.
type LineItem struct {
	X1 float64 `dynamodbav:"x1"`
	Y1 float64 `dynamodbav:"y1"`
	X2 float64 `dynamodbav:"x2"`
	Y2 float64 `dynamodbav:"y2"`
}

// CalibrationItem is the stored calibration map (absent: none). Every
// attribute is always written, so two equal domain calibrations are equal
// maps and a condition "calibration = :c" recognises a repeated edit.
type CalibrationItem struct {
	Frame   int      `dynamodbav:"frame"`
	Line    LineItem `dynamodbav:"line"`
	Length  float64  `dynamodbav:"length"`
	Unit    string   `dynamodbav:"unit"`
	YLine   LineItem `dynamodbav:"yLine"`
	YLength float64  `dynamodbav:"yLength"`
	OriginX float64  `dynamodbav:"originX"`
	OriginY float64  `dynamodbav:"originY"`
	Angle   float64  `dynamodbav:"angle"`
	YUp     bool     `dynamodbav:"yUp"`
}

func newLineItem(l domain.Line) LineItem { return LineItem{X1: l.X1, Y1: l.Y1, X2: l.X2, Y2: l.Y2} }

func (l LineItem) line() domain.Line { return domain.Line{X1: l.X1, Y1: l.Y1, X2: l.X2, Y2: l.Y2} }

// NewCalibrationItem converts a calibration to its stored form.
func NewCalibrationItem(c domain.Calibration) CalibrationItem {
	return CalibrationItem{
		Frame: c.Frame, Line: newLineItem(c.Line), Length: c.Length, Unit: string(c.Unit),
		YLine: newLineItem(c.YLine), YLength: c.YLength, OriginX: c.OriginX, OriginY: c.OriginY, Angle: c.Angle, YUp: c.YUp,
	}
}

// Calibration converts a stored calibration to the domain's.
func (c CalibrationItem) Calibration() domain.Calibration {
	return domain.Calibration{
		Frame: c.Frame, Line: c.Line.line(), Length: c.Length, Unit: domain.Unit(c.Unit),
		YLine: c.YLine.line(), YLength: c.YLength, OriginX: c.OriginX, OriginY: c.OriginY, Angle: c.Angle, YUp: c.YUp,
	}
}

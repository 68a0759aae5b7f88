package events

import (
	"fmt"
	"strconv"

	"github.com/movietrace/tracinglocks/domain"
)

// calibrationEvents: a change of the row's calibration is a fact of the
// movie's history. Who made it is the live analysis lease's holder on the
// new row (only the holder may edit); when it happened the row's UpdatedAt.
func calibrationEvents(old, new *domain.Movie) []Event {
	var before *domain.Calibration
	if old != nil {
		before = old.Calibration
	}
	after := new.Calibration
	if (before == nil && after == nil) || (before != nil && after != nil && *before == *after) {
		return nil
	}
	e := Event{Type: CalibrationSet, MovieID: new.ID, At: new.UpdatedAt.UTC(), Version: new.Version}
	if l := new.Lease; l != nil {
		e.UserID, e.UserName = l.UserID, l.UserName
	}
	if after == nil {
		e.Type = CalibrationCleared
	} else {
		e.Calibration = DescribeCalibration(*after)
	}
	return []Event{e}
}

// DescribeCalibration is a calibration in one line, for the history.
func DescribeCalibration(c domain.Calibration) string {
	n := func(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) }
	s := fmt.Sprintf("line (%s, %s)-(%s, %s) on frame %d = %s %s", n(c.Line.X1), n(c.Line.Y1), n(c.Line.X2), n(c.Line.Y2), c.Frame, n(c.Length), c.Unit)
	if c.HasYLine() {
		s += fmt.Sprintf("; y line (%s, %s)-(%s, %s) = %s %s", n(c.YLine.X1), n(c.YLine.Y1), n(c.YLine.X2), n(c.YLine.Y2), n(c.YLength), c.Unit)
	}
	dir := "up"
	if !c.YUp {
		dir = "down"
	}
	return s + fmt.Sprintf("; origin (%s, %s); x axis at %s°, y %s", n(c.OriginX), n(c.OriginY), n(c.Angle), dir)
}

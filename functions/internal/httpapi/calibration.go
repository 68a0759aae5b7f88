package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/domain/kinematics"
)

// PUT /movies/{id}/calibration: set the movie's calibration under the
// caller's analysis lease (like every edit: Lease-Id header, 409 without
// the live lease). Recalibrating retraces nothing.
func (h *Handler) editCalibration(w http.ResponseWriter, r *http.Request, c call) error {
	return h.edit(w, r, c, func(leaseID string, body []byte) (domain.Command, error) {
		cal, err := decodeCalibration(body)
		return domain.EditCalibration{LeaseID: leaseID, UserID: c.user.ID, Now: c.now, Calibration: cal}, err
	})
}

// DELETE /movies/{id}/calibration: remove it (results in pixels again).
func (h *Handler) clearCalibration(w http.ResponseWriter, r *http.Request, c call) error {
	leaseID, err := leaseHeader(r)
	if err != nil {
		return err
	}
	m, err := h.cfg.Movies.Commit(r.Context(), c.movieID, domain.ClearCalibration{LeaseID: leaseID, UserID: c.user.ID, Now: c.now})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, detail(m, c.now, c.user))
}

// decodeCalibration decodes
//
//	{"frame": int, "line": {"x1", "y1", "x2", "y2"}, "length": number, "unit": string,
//	 "yLine": {...}, "yLength": number, "origin": {"x", "y"}, "angle": number, "yUp": bool}
//
// line, length, unit and origin are required; frame defaults to 0, angle to
// 0, yUp to true; yLine and yLength come together or not at all. The
// domain validates the value (Calibration.Validate) before it is applied.
func decodeCalibration(data []byte) (domain.Calibration, error) {
	c := domain.Calibration{YUp: true}
	var lineSet, lengthSet, unitSet, originSet, yLineSet, yLengthSet, frameSet, angleSet, yUpSet bool
	var unit string
	err := decodeObject(data, "", map[string]fieldFunc{
		"frame":   intField(&c.Frame, &frameSet),
		"line":    lineField(&c.Line, &lineSet),
		"length":  numberField(&c.Length, &lengthSet),
		"unit":    stringField(&unit, &unitSet),
		"yLine":   lineField(&c.YLine, &yLineSet),
		"yLength": numberField(&c.YLength, &yLengthSet),
		"origin":  pointField(&c.OriginX, &c.OriginY, &originSet),
		"angle":   numberField(&c.Angle, &angleSet),
		"yUp":     boolField(&c.YUp, &yUpSet),
	})
	if err == nil {
		err = firstErr(required("line", lineSet), required("length", lengthSet), required("unit", unitSet), required("origin", originSet))
	}
	if err == nil && yLineSet != yLengthSet {
		err = domain.Invalid("yLine", "a second line needs its length, and a second length its line")
	}
	if err != nil {
		return domain.Calibration{}, err
	}
	c.Unit = domain.Unit(unit)
	if err := c.Validate(); err != nil {
		return domain.Calibration{}, err
	}
	return c, nil
}

// lineField decodes {"x1", "y1", "x2", "y2"}, all required.
func lineField(dst *domain.Line, set *bool) fieldFunc {
	return func(path string, raw json.RawMessage) error {
		var l domain.Line
		var s1, s2, s3, s4 bool
		err := decodeObject(raw, path, map[string]fieldFunc{
			"x1": numberField(&l.X1, &s1), "y1": numberField(&l.Y1, &s2),
			"x2": numberField(&l.X2, &s3), "y2": numberField(&l.Y2, &s4),
		})
		if err == nil {
			err = firstErr(required(path+".x1", s1), required(path+".y1", s2), required(path+".x2", s3), required(path+".y2", s4))
		}
		if err != nil {
			return err
		}
		*dst, *set = l, true
		return nil
	}
}

// pointField decodes {"x", "y"}, both required.
func pointField(x, y *float64, set *bool) fieldFunc {
	return func(path string, raw json.RawMessage) error {
		var px, py float64
		var sx, sy bool
		err := decodeObject(raw, path, map[string]fieldFunc{"x": numberField(&px, &sx), "y": numberField(&py, &sy)})
		if err == nil {
			err = firstErr(required(path+".x", sx), required(path+".y", sy))
		}
		if err != nil {
			return err
		}
		*x, *y, *set = px, py, true
		return nil
	}
}

// boolField decodes a JSON true or false.
func boolField(dst *bool, set *bool) fieldFunc {
	return func(path string, raw json.RawMessage) error {
		switch string(raw) {
		case "true":
			*dst, *set = true, true
		case "false":
			*dst, *set = false, true
		default:
			return &malformed{field: path, reason: "must be true or false"}
		}
		return nil
	}
}

// LineView is a calibration line, normalised frame coordinates.
type LineView struct {
	X1 float64 `json:"x1"`
	Y1 float64 `json:"y1"`
	X2 float64 `json:"x2"`
	Y2 float64 `json:"y2"`
}

// PointXY is a point in normalised frame coordinates.
type PointXY struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// CalibrationView is a movie's calibration as PUT takes it, with the
// scales it gives on the movie's frames (null when they cannot be computed).
type CalibrationView struct {
	Frame   int       `json:"frame"`
	Line    LineView  `json:"line"`
	Length  float64   `json:"length"`
	Unit    string    `json:"unit"`
	YLine   *LineView `json:"yLine,omitempty"`
	YLength float64   `json:"yLength,omitempty"`
	Origin  PointXY   `json:"origin"`
	Angle   float64   `json:"angle"`
	YUp     bool      `json:"yUp"`
	// UnitsPerPixel is the length of one pixel along the image's x and y.
	UnitsPerPixel *PointXY `json:"unitsPerPixel"`
}

// CoordinateSystem says what the positions of a results export mean.
type CoordinateSystem struct {
	// Unit of positions: "px" (uncalibrated), "frame" (no frame size
	// known) or a calibrated unit (um, mm, cm, m, km, in, ft).
	Unit string `json:"unit"`
	// TimeUnit is always "s"; velocities are in unit/s, accelerations in
	// unit/s^2.
	TimeUnit   string `json:"timeUnit"`
	Calibrated bool   `json:"calibrated"`
	// Origin (normalised frame coordinates), XAxisAngle (degrees
	// counter-clockwise from rightward on screen) and YUp: uncalibrated,
	// the frame's top-left corner, 0 and false (y down).
	Origin      PointXY          `json:"origin"`
	XAxisAngle  float64          `json:"xAxisAngle"`
	YUp         bool             `json:"yUp"`
	Calibration *CalibrationView `json:"calibration"`
	// Width and Height of the frame in pixels (0 when unknown).
	Width  int `json:"width"`
	Height int `json:"height"`
}

func calibrationView(m domain.Movie) *CalibrationView {
	c := m.Calibration
	if c == nil {
		return nil
	}
	v := &CalibrationView{
		Frame: c.Frame, Line: LineView(c.Line), Length: c.Length, Unit: string(c.Unit),
		Origin: PointXY{c.OriginX, c.OriginY}, Angle: c.Angle, YUp: c.YUp,
	}
	if c.HasYLine() {
		l := LineView(c.YLine)
		v.YLine, v.YLength = &l, c.YLength
	}
	if w, h := frameSize(m); w > 0 {
		if a, b, err := c.Scales(w, h); err == nil {
			v.UnitsPerPixel = &PointXY{a, b}
		}
	}
	return v
}

func frameSize(m domain.Movie) (w, h int) {
	if m.Video == nil {
		return 0, 0
	}
	return m.Video.Width, m.Video.Height
}

// coordinateSystem is the movie's system for results, and its description.
func coordinateSystem(m domain.Movie) (kinematics.System, CoordinateSystem, error) {
	w, h := frameSize(m)
	sys, err := kinematics.NewSystem(m.Calibration, w, h)
	if err != nil {
		return sys, CoordinateSystem{}, err
	}
	out := CoordinateSystem{Unit: sys.Unit(), TimeUnit: "s", Calibrated: sys.Calibrated(), Width: w, Height: h, Calibration: calibrationView(m)}
	if c := m.Calibration; c != nil {
		out.Origin, out.XAxisAngle, out.YUp = PointXY{c.OriginX, c.OriginY}, c.Angle, c.YUp
	}
	return sys, out, nil
}

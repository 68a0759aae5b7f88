package httpapi

import (
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/movietrace/tracinglocks/domain"
)

// LongColumns are the columns of the long results CSV, one row per point;
// WideColumns (per marker, "<markerId>.<column>") those of the wide CSV,
// after "frame" and "time". docs/api.md documents each.
var (
	LongColumns = []string{"frame", "time", "markerId", "label", "x", "y", "lost", "uncertain", "displacement", "path",
		"vx", "vy", "speed", "ax", "ay", "acceleration", "confidence"}
	WideColumns = []string{"x", "y", "lost", "uncertain", "displacement", "path", "vx", "vy", "speed", "ax", "ay", "acceleration", "confidence"}
)

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func cell(v *float64) string {
	if v == nil {
		return ""
	}
	return num(*v)
}

// cells are a sample's values in WideColumns order.
func (s SampleResult) cells() []string {
	return []string{cell(s.X), cell(s.Y), strconv.FormatBool(s.Lost), strconv.FormatBool(s.Uncertain), cell(s.Displacement), cell(s.Path),
		cell(s.VX), cell(s.VY), cell(s.Speed), cell(s.AX), cell(s.AY), cell(s.Acceleration), num(s.Confidence)}
}

// writeResultsHeader writes the "# key: value" comment lines every results
// CSV starts with: the movie, the trace, the units, the coordinate system,
// the calibration and the difference scheme.
func writeResultsHeader(w io.Writer, m domain.Movie, res Results) {
	cs := res.Coordinates
	fmt.Fprintf(w, "# movie: %s\n# movieId: %s\n# frameRate: %s\n# trim: %d-%d\n# captureInterval: %d\n",
		commentText(m.Title), m.ID, num(m.FrameRate), m.Settings.Trim.Start, m.Settings.Trim.End, m.Settings.CaptureInterval)
	if t := res.Trace; t != nil {
		fmt.Fprintf(w, "# jobId: %s\n# user: %s\n", commentText(t.JobID), commentText(t.UserName))
		for _, q := range t.Quality {
			fmt.Fprintf(w, "# quality: %s\n", commentText(q))
		}
	}
	fmt.Fprintf(w, "# unit: %s\n# timeUnit: s\n# velocityUnit: %s/s\n# accelerationUnit: %s/s^2\n", cs.Unit, cs.Unit, cs.Unit)
	if c := cs.Calibration; c != nil {
		dir := "up"
		if !c.YUp {
			dir = "down"
		}
		fmt.Fprintf(w, "# coordinates: calibrated; origin at (%s, %s) of the frame's width and height; x axis at %s degrees counter-clockwise from rightward; y axis %s\n",
			num(c.Origin.X), num(c.Origin.Y), num(c.Angle), dir)
		fmt.Fprintf(w, "# calibration: line (%s, %s)-(%s, %s) on frame %d = %s %s", num(c.Line.X1), num(c.Line.Y1), num(c.Line.X2), num(c.Line.Y2), c.Frame, num(c.Length), c.Unit)
		if c.YLine != nil {
			fmt.Fprintf(w, "; y line (%s, %s)-(%s, %s) = %s %s", num(c.YLine.X1), num(c.YLine.Y1), num(c.YLine.X2), num(c.YLine.Y2), num(c.YLength), c.Unit)
		}
		if p := c.UnitsPerPixel; p != nil {
			fmt.Fprintf(w, "; %s %s per pixel in x, %s in y", num(p.X), c.Unit, num(p.Y))
		}
		fmt.Fprintf(w, "; frame %dx%d px\n", cs.Width, cs.Height)
	} else {
		fmt.Fprintf(w, "# coordinates: uncalibrated; %s from the frame's top-left corner, x right, y down\n", cs.Unit)
	}
	fmt.Fprintf(w, "# differences: %s; smoothing half-width %d samples\n", res.Differences.Scheme, res.Differences.Smooth)
	for _, mr := range res.Markers {
		fmt.Fprintf(w, "# marker: %s = %s\n", mr.ID, commentText(mr.Label))
	}
}

func writeResultsCSV(w http.ResponseWriter, m domain.Movie, res Results, wide bool) error {
	layout := "long"
	if wide {
		layout = "wide"
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-results-%s.csv"`, m.ID, layout))
	w.WriteHeader(http.StatusOK)
	writeResultsHeader(w, m, res)
	cw := csv.NewWriter(w)
	if wide {
		writeWide(cw, res)
	} else {
		_ = cw.Write(LongColumns)
		for _, mr := range res.Markers {
			for _, s := range mr.Samples {
				row := append([]string{strconv.Itoa(s.Frame), num(s.Time), csvCell(mr.ID), csvCell(mr.Label)}, s.cells()...)
				_ = cw.Write(row)
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeWide writes one row per traced frame: frame, time, then WideColumns
// for each marker (empty cells where the frame has no point of it).
func writeWide(cw *csv.Writer, res Results) {
	header := []string{"frame", "time"}
	for _, mr := range res.Markers {
		for _, c := range WideColumns {
			header = append(header, csvCell(mr.ID)+"."+c)
		}
	}
	_ = cw.Write(header)
	// Each marker's samples are in frame order: merge them by frame.
	next := make([]int, len(res.Markers))
	for {
		frame, t := -1, 0.0
		for i, mr := range res.Markers {
			if next[i] < len(mr.Samples) {
				if s := mr.Samples[next[i]]; frame < 0 || s.Frame < frame {
					frame, t = s.Frame, s.Time
				}
			}
		}
		if frame < 0 {
			return
		}
		row := []string{strconv.Itoa(frame), num(t)}
		for i, mr := range res.Markers {
			if next[i] < len(mr.Samples) && mr.Samples[next[i]].Frame == frame {
				row = append(row, mr.Samples[next[i]].cells()...)
				next[i]++
			} else {
				row = append(row, make([]string, len(WideColumns))...)
			}
		}
		_ = cw.Write(row)
	}
}

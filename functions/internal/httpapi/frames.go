package httpapi

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// FrameReader reads a movie's traced frames in frame order: at most limit
// frames with index >= from, and the index to continue from (nil at the
// end). dynamo.FrameStore implements it.
type FrameReader interface {
	Page(ctx context.Context, movieID string, from, limit int) (page []domain.Frame, next *int, err error)
}

// FramePage is GET /movies/{id}/frames as JSON.
type FramePage struct {
	Movie DownloadMovie  `json:"movie"`
	Trace *DownloadTrace `json:"trace"`
	// Coordinates says what the points' units are and carries the movie's
	// calibration (calibrated positions: GET /movies/{id}/results).
	Coordinates CoordinateSystem `json:"coordinates"`
	Frames      []FrameView      `json:"frames"`
	Next        *int             `json:"next"`
}

// DownloadMovie names the movie a download is of and the settings that
// give its points their meaning.
type DownloadMovie struct {
	ID              string   `json:"id"`
	Title           string   `json:"title"`
	FrameRate       float64  `json:"frameRate"`
	Trim            TrimView `json:"trim"`
	CaptureInterval int      `json:"captureInterval"`
}

// DownloadTrace is the movie's last job (lastJob of the movie's detail):
// a job ID is shown only once the job finished or its lease went stale,
// when it no longer authorises anything (docs/api.md). Never a lease ID.
type DownloadTrace struct {
	JobID    string `json:"jobId"`
	UserName string `json:"userName"`
	// Quality: each marker's quality over the trace, one sentence each
	// (domain.QualitySentences); absent when the job recorded none.
	Quality []string `json:"quality,omitempty"`
}

// FrameView is one frame of a page. The frame's job ID is left out on
// purpose: while a trace runs it is the live tracing lease's ID.
type FrameView struct {
	Frame  int         `json:"frame"`
	Points []PointView `json:"points"`
}

// PointView is one point of a frame: normalised (0-1) and pixel
// coordinates, the tracer's confidence, and whether the marker was lost. A
// lost point has no coordinates (null), only the confidence.
type PointView struct {
	MarkerID   string   `json:"markerId"`
	Label      string   `json:"label"`
	Time       *float64 `json:"time"`
	X          *float64 `json:"x"`
	Y          *float64 `json:"y"`
	PX         *float64 `json:"px"`
	PY         *float64 `json:"py"`
	Confidence float64  `json:"confidence"`
	Lost       bool     `json:"lost"`
	// Doubt: why the tracer doubts this position (domain.PointDoubts);
	// absent on a confident point.
	Doubt string `json:"doubt,omitempty"`
}

// NewPointView is the view of a domain point on frame index of a movie
// (label from the movie's markers, time = index / frame rate).
func NewPointView(m domain.Movie, index int, p domain.Point) PointView {
	v := PointView{MarkerID: p.MarkerID, Label: markerLabel(m, p.MarkerID), Time: frameTime(m, index), Confidence: p.Confidence, Lost: p.Lost, Doubt: p.Doubt}
	if !p.Lost {
		v.X, v.Y, v.PX, v.PY = &p.X, &p.Y, &p.PX, &p.PY
	}
	return v
}

// GET /movies/{id}/frames?from=&limit=&format=: traced frames, one page.
// Available whatever lease is live: reading never needs a lease. JSON by
// default; CSV (one row per point) with format=csv or Accept: text/csv,
// the next page then linked from a Link header (rel="next").
func (h *Handler) frames(w http.ResponseWriter, r *http.Request, c call) error {
	q, err := decodeFramesQuery(r.URL.Query())
	if err != nil {
		return err
	}
	if !q.FormatSet {
		// Values, not Get: the Lambda adapter splits a header on commas.
		q.CSV = wantsCSV(strings.Join(r.Header.Values("Accept"), ","))
	}
	// The movie must exist: an unknown movie is a 404, not an empty page.
	m, err := h.cfg.Movies.Get(r.Context(), c.movieID)
	if err != nil {
		return err
	}
	page, next, err := h.cfg.Frames.Page(r.Context(), c.movieID, q.From, q.Limit)
	if err != nil {
		return err
	}
	if q.CSV {
		return writeFramesCSV(w, m, c.now, q, page, next)
	}
	_, cs, err := coordinateSystem(m)
	if err != nil {
		return err
	}
	out := FramePage{Movie: downloadMovie(m), Trace: downloadTrace(m, c.now), Coordinates: cs, Frames: make([]FrameView, len(page)), Next: next}
	for i, f := range page {
		fv := FrameView{Frame: f.Index, Points: make([]PointView, len(f.Points))}
		for j, p := range f.Points {
			fv.Points[j] = NewPointView(m, f.Index, p)
		}
		out.Frames[i] = fv
	}
	return writeJSON(w, http.StatusOK, out)
}

func downloadMovie(m domain.Movie) DownloadMovie {
	return DownloadMovie{ID: m.ID, Title: m.Title, FrameRate: m.FrameRate,
		Trim: TrimView{Start: m.Settings.Trim.Start, End: m.Settings.Trim.End}, CaptureInterval: m.Settings.CaptureInterval}
}

func downloadTrace(m domain.Movie, now time.Time) *DownloadTrace {
	j := m.View(now).LastJob
	if j == nil {
		return nil
	}
	return &DownloadTrace{JobID: j.JobID, UserName: j.UserName, Quality: qualitySentences(m, j)}
}

func markerLabel(m domain.Movie, id string) string {
	for _, mk := range m.Settings.Markers {
		if mk.ID == id {
			return mk.Label
		}
	}
	return ""
}

func frameTime(m domain.Movie, index int) *float64 {
	if m.FrameRate <= 0 {
		return nil
	}
	t := float64(index) / m.FrameRate
	return &t
}

// commentText keeps a header value on its one comment line.
func commentText(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

func writeFramesCSV(w http.ResponseWriter, m domain.Movie, now time.Time, q framesQuery, page []domain.Frame, next *int) error {
	movieID := m.ID
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-frames-%d.csv"`, movieID, q.From))
	if next != nil {
		v := url.Values{"from": {strconv.Itoa(*next)}, "limit": {strconv.Itoa(q.Limit)}, "format": {"csv"}}
		w.Header().Set("Link", fmt.Sprintf(`</movies/%s/frames?%s>; rel="next"`, movieID, v.Encode()))
	}
	w.WriteHeader(http.StatusOK)
	// The header: "# key: value" comment lines before the column row.
	fmt.Fprintf(w, "# movie: %s\n# movieId: %s\n# frameRate: %s\n# trim: %d-%d\n# captureInterval: %d\n",
		commentText(m.Title), m.ID, num(m.FrameRate), m.Settings.Trim.Start, m.Settings.Trim.End, m.Settings.CaptureInterval)
	if t := downloadTrace(m, now); t != nil {
		fmt.Fprintf(w, "# jobId: %s\n# user: %s\n", commentText(t.JobID), commentText(t.UserName))
		for _, q := range t.Quality {
			fmt.Fprintf(w, "# quality: %s\n", commentText(q))
		}
	}
	fmt.Fprint(w, "# units: x, y in fractions of the frame's width and height; px, py in pixels from the frame's top-left corner, y down; time in s\n")
	if c := calibrationView(m); c != nil {
		fmt.Fprintf(w, "# calibration: line (%s, %s)-(%s, %s) on frame %d = %s %s; calibrated results: GET /movies/%s/results\n",
			num(c.Line.X1), num(c.Line.Y1), num(c.Line.X2), num(c.Line.Y2), c.Frame, num(c.Length), c.Unit, m.ID)
	} else {
		fmt.Fprint(w, "# calibration: none\n")
	}
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"frame", "time", "markerId", "label", "x", "y", "px", "py", "confidence", "lost", "doubt"})
	for _, f := range page {
		for _, p := range f.Points {
			// Marker IDs are [A-Za-z0-9_-] starting alphanumeric
			// (domain.ValidateMarkers); csvCell is for a row that is not.
			// A lost point's coordinates are empty cells.
			row := []string{strconv.Itoa(f.Index), "", csvCell(p.MarkerID), csvCell(markerLabel(m, p.MarkerID)), "", "", "", "", num(p.Confidence), strconv.FormatBool(p.Lost), p.Doubt}
			if t := frameTime(m, f.Index); t != nil {
				row[1] = num(*t)
			}
			if !p.Lost {
				row[4], row[5], row[6], row[7] = num(p.X), num(p.Y), num(p.PX), num(p.PY)
			}
			_ = cw.Write(row)
		}
	}
	cw.Flush()
	return nil
}

// csvCell keeps a cell from being read as a spreadsheet formula.
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

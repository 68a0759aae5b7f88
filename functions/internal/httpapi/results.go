package httpapi

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/domain/kinematics"
)

// GET /movies/{id}/results: the derived quantities of the traced frames
// (domain/kinematics) in the movie's coordinate system, for every marker:
// JSON by default, CSV with format=csv or Accept: text/csv, long (one row
// per point, the default) or wide (layout=wide: one row per frame, columns
// per marker). Read from the stored frames and the row's calibration at
// request time, so a recalibration changes every value without a retrace.

// MaxResultPoints bounds one results response (points = frames x markers):
// a Lambda response is at most 6 MB, and a point takes up to ~200 bytes.
const MaxResultPoints = 20_000

// MaxSmooth bounds the smoothing half-width.
const MaxSmooth = 10

// DifferenceScheme describes, in the exports' headers, how velocities and
// accelerations are computed (kinematics.Derive).
const DifferenceScheme = "three-point finite differences on the sample times (central inside a run of known samples, one-sided at its ends; lost, uncertain or missing samples end a run)"

type resultsQuery struct {
	CSV, FormatSet bool
	Wide           bool
	Smooth         int
}

func decodeResultsQuery(q url.Values) (resultsQuery, error) {
	var out resultsQuery
	for _, k := range slices.Sorted(maps.Keys(q)) {
		vs := q[k]
		if len(vs) != 1 {
			return resultsQuery{}, &malformed{field: fieldName(k), reason: "must be given at most once"}
		}
		v := vs[0]
		switch k {
		case "format":
			switch v {
			case "csv":
				out.CSV = true
			case "json":
			default:
				return resultsQuery{}, domain.Invalid("format", "must be json or csv")
			}
			out.FormatSet = true
		case "layout":
			switch v {
			case "wide":
				out.Wide = true
			case "long":
			default:
				return resultsQuery{}, domain.Invalid("layout", "must be long or wide")
			}
		case "smooth":
			n, err := strconv.Atoi(v)
			if err != nil || v == "" || v[0] == '+' {
				return resultsQuery{}, &malformed{field: k, reason: "must be an integer"}
			}
			if n < 0 || n > MaxSmooth {
				return resultsQuery{}, domain.Invalid("smooth", "must be 0-%d", MaxSmooth)
			}
			out.Smooth = n
		default:
			return resultsQuery{}, &malformed{field: fieldName(k), reason: "unknown parameter"}
		}
	}
	if out.Wide && out.FormatSet && !out.CSV {
		return resultsQuery{}, domain.Invalid("layout", "the wide layout is a CSV layout (format=csv)")
	}
	return out, nil
}

// MarkerResult is one marker's samples and summary.
type MarkerResult struct {
	ID      string         `json:"id"`
	Label   string         `json:"label"`
	Summary SummaryView    `json:"summary"`
	Samples []SampleResult `json:"samples"`
	// points keeps the raw points for the CSV writers.
	points []domain.Point
}

// SummaryView is kinematics.Summary: distance in the unit, speeds in
// unit/s, times in s.
type SummaryView struct {
	Samples   int     `json:"samples"`
	Lost      int     `json:"lost"`
	Uncertain int     `json:"uncertain"`
	Distance  float64 `json:"distance"`
	MeanSpeed float64 `json:"meanSpeed"`
	MaxSpeed  float64 `json:"maxSpeed"`
	TimeLost  float64 `json:"timeLost"`
	Duration  float64 `json:"duration"`
}

// SampleResult is one marker on one frame. Null members are unknown: no
// position (lost or uncertain), no velocity (no known neighbour), no
// acceleration (a run shorter than three samples).
type SampleResult struct {
	Frame        int      `json:"frame"`
	Time         float64  `json:"time"`
	X            *float64 `json:"x"`
	Y            *float64 `json:"y"`
	Lost         bool     `json:"lost"`
	Uncertain    bool     `json:"uncertain"`
	Displacement *float64 `json:"displacement"`
	Path         *float64 `json:"path"`
	VX           *float64 `json:"vx"`
	VY           *float64 `json:"vy"`
	Speed        *float64 `json:"speed"`
	AX           *float64 `json:"ax"`
	AY           *float64 `json:"ay"`
	Acceleration *float64 `json:"acceleration"`
	Confidence   float64  `json:"confidence"`
}

// Results is GET /movies/{id}/results as JSON.
type Results struct {
	Movie       DownloadMovie    `json:"movie"`
	Trace       *DownloadTrace   `json:"trace"`
	Coordinates CoordinateSystem `json:"coordinates"`
	Differences DifferencesView  `json:"differences"`
	Markers     []MarkerResult   `json:"markers"`
}

// DifferencesView is how derivatives were computed.
type DifferencesView struct {
	Scheme string `json:"scheme"`
	Smooth int    `json:"smooth"`
	// Step is the capture interval: samples further apart are not neighbours.
	Step int `json:"step"`
}

func (h *Handler) results(w http.ResponseWriter, r *http.Request, c call) error {
	q, err := decodeResultsQuery(r.URL.Query())
	if err != nil {
		return err
	}
	if !q.FormatSet {
		q.CSV = wantsCSV(strings.Join(r.Header.Values("Accept"), ","))
	}
	m, err := h.cfg.Movies.Get(r.Context(), c.movieID)
	if err != nil {
		return err
	}
	frames, err := h.allFrames(r.Context(), m)
	if err != nil {
		return err
	}
	res, err := deriveResults(m, frames, q.Smooth)
	if err != nil {
		return err
	}
	res.Trace = downloadTrace(m, c.now)
	if q.CSV {
		return writeResultsCSV(w, m, res, q.Wide)
	}
	return writeJSON(w, http.StatusOK, res)
}

// allFrames reads every traced frame of m, page by page, refusing more
// than MaxResultPoints points.
func (h *Handler) allFrames(ctx context.Context, m domain.Movie) ([]domain.Frame, error) {
	var out []domain.Frame
	points := 0
	for from := 0; ; {
		page, next, err := h.cfg.Frames.Page(ctx, m.ID, from, MaxFrameLimit)
		if err != nil {
			return nil, err
		}
		for _, f := range page {
			points += len(f.Points)
		}
		if points > MaxResultPoints {
			return nil, domain.Invalid("movie", "more than %d traced points: too many for one results download; use the frame pages (GET /movies/{id}/frames)", MaxResultPoints)
		}
		out = append(out, page...)
		if next == nil {
			return out, nil
		}
		from = *next
	}
}

// deriveResults computes every marker's rows: markers in the movie's
// order, then any marker only the frames name, in order of appearance.
func deriveResults(m domain.Movie, frames []domain.Frame, smooth int) (Results, error) {
	sys, cs, err := coordinateSystem(m)
	if err != nil {
		return Results{}, err
	}
	out := Results{Movie: downloadMovie(m), Coordinates: cs,
		Differences: DifferencesView{Scheme: DifferenceScheme, Smooth: smooth, Step: m.Settings.CaptureInterval}}
	index := map[string]int{}
	add := func(id string) int {
		if i, ok := index[id]; ok {
			return i
		}
		index[id] = len(out.Markers)
		out.Markers = append(out.Markers, MarkerResult{ID: id, Label: markerLabel(m, id)})
		return index[id]
	}
	for _, mk := range m.Settings.Markers {
		add(mk.ID)
	}
	samples := make([][]kinematics.Sample, 0, len(out.Markers))
	for _, f := range frames {
		t := 0.0
		if ft := frameTime(m, f.Index); ft != nil {
			t = *ft
		}
		for _, p := range f.Points {
			i := add(p.MarkerID)
			for len(samples) <= i {
				samples = append(samples, nil)
			}
			samples[i] = append(samples[i], kinematics.Sample{Frame: f.Index, T: t, X: p.X, Y: p.Y, Lost: p.Lost, Uncertain: p.Doubt != ""})
			out.Markers[i].points = append(out.Markers[i].points, p)
		}
	}
	for len(samples) < len(out.Markers) {
		samples = append(samples, nil)
	}
	opt := kinematics.Options{Step: m.Settings.CaptureInterval, Smooth: smooth}
	for i := range out.Markers {
		mr := &out.Markers[i]
		rows := kinematics.Derive(samples[i], sys, opt)
		s := kinematics.Summarize(samples[i], rows)
		mr.Summary = SummaryView{Samples: s.Samples, Lost: s.Lost, Uncertain: s.Uncertain, Distance: s.Distance,
			MeanSpeed: s.MeanSpeed, MaxSpeed: s.MaxSpeed, TimeLost: s.TimeLost, Duration: s.Duration}
		mr.Samples = make([]SampleResult, len(rows))
		for j, row := range rows {
			mr.Samples[j] = sampleResult(row, samples[i][j], mr.points[j])
		}
	}
	return out, nil
}

func sampleResult(r kinematics.Row, s kinematics.Sample, p domain.Point) SampleResult {
	v := func(f float64) *float64 { return &f }
	out := SampleResult{Frame: r.Frame, Time: r.T, Lost: s.Lost, Uncertain: s.Uncertain, Confidence: p.Confidence}
	if r.Known {
		out.X, out.Y, out.Displacement, out.Path = v(r.X), v(r.Y), v(r.Displacement), v(r.Path)
	}
	if r.HasVelocity {
		out.VX, out.VY, out.Speed = v(r.VX), v(r.VY), v(r.Speed)
	}
	if r.HasAcceleration {
		out.AX, out.AY, out.Acceleration = v(r.AX), v(r.AY), v(r.Acceleration)
	}
	return out
}

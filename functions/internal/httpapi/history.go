package httpapi

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/schema"
)

// HistoryReader reads a movie's audit items newest first, a page at a time
// (dynamo.AuditReader implements it).
type HistoryReader interface {
	History(ctx context.Context, movieID string, after *events.HistoryPosition, limit int) ([]schema.AuditItem, *events.HistoryPosition, error)
}

// Limits of GET /movies/{id}/history.
const (
	DefaultHistoryLimit = 20
	MaxHistoryLimit     = 100
)

// HistoryPage is GET /movies/{id}/history: newest first; Next is the
// cursor of the following page, null on the last.
type HistoryPage struct {
	Events []HistoryEvent `json:"events"`
	Next   *string        `json:"next"`
}

// HistoryEvent is one trace event as users may see it: who, when, with
// which settings and what was traced. Never a job or lease ID, never a
// user ID (Yours says whether it was the caller).
type HistoryEvent struct {
	Type      string           `json:"type"` // started, completed, failed, cancelled, stopped
	At        string           `json:"at"`
	UserName  string           `json:"userName"`
	Yours     bool             `json:"yours,omitempty"`
	FromFrame int              `json:"fromFrame"`
	Settings  *HistorySettings `json:"settings,omitempty"`
	// Frames is how many frames an ended trace wrote; FirstFrame and
	// LastFrame the range they span, when known.
	Frames     *int   `json:"frames,omitempty"`
	FirstFrame *int   `json:"firstFrame,omitempty"`
	LastFrame  *int   `json:"lastFrame,omitempty"`
	Summary    string `json:"summary,omitempty"`
	// Calibration describes the calibration set (type calibrated).
	Calibration string `json:"calibration,omitempty"`
}

// HistorySettings are the settings a trace ran with.
type HistorySettings struct {
	Trim            TrimView `json:"trim"`
	CaptureInterval int      `json:"captureInterval"`
}

// historyTypes maps audit event types to the history's words.
var historyTypes = map[events.EventType]string{
	events.TracingStarted:   "started",
	events.TracingCompleted: "completed",
	events.TracingFailed:    "failed",
	events.TracingAbandoned: "stopped",
	events.TracingCancelled: "cancelled",
	// Not traces: the calibration's changes (no frames, no settings).
	events.CalibrationSet:     "calibrated",
	events.CalibrationCleared: "uncalibrated",
}

type historyQuery struct {
	Limit int
	After *events.HistoryPosition
}

func decodeHistoryQuery(q url.Values) (historyQuery, error) {
	out := historyQuery{Limit: DefaultHistoryLimit}
	for _, k := range slices.Sorted(maps.Keys(q)) {
		vs := q[k]
		if len(vs) != 1 {
			return historyQuery{}, &malformed{field: fieldName(k), reason: "must be given at most once"}
		}
		v := vs[0]
		switch k {
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || v == "" || v[0] == '+' {
				return historyQuery{}, &malformed{field: k, reason: "must be an integer"}
			}
			if n < 1 || n > MaxHistoryLimit {
				return historyQuery{}, domain.Invalid("limit", "must be 1-%d", MaxHistoryLimit)
			}
			out.Limit = n
		case "cursor":
			p, err := events.ParseCursor(v)
			if err != nil {
				// Not a value out of range: a string this API never made.
				return historyQuery{}, &malformed{field: "cursor", reason: "not a cursor this API returned: load the history again from its first page"}
			}
			out.After = &p
		default:
			return historyQuery{}, &malformed{field: fieldName(k), reason: "unknown query parameter"}
		}
	}
	return out, nil
}

// GET /movies/{id}/history?limit=&cursor=: the movie's trace history.
func (h *Handler) history(w http.ResponseWriter, r *http.Request, c call) error {
	q, err := decodeHistoryQuery(r.URL.Query())
	if err != nil {
		return err
	}
	// An unknown movie is a 404, not an empty history.
	if _, err := h.cfg.Movies.Get(r.Context(), c.movieID); err != nil {
		return err
	}
	items, next, err := h.cfg.History.History(r.Context(), c.movieID, q.After, q.Limit)
	if err != nil {
		var de *domain.Error
		if errors.As(err, &de) {
			return errors.New("history: " + de.Message) // never the caller's fault here
		}
		return err
	}
	out := HistoryPage{Events: make([]HistoryEvent, 0, len(items))}
	for _, it := range items {
		if e, ok := historyEvent(it, c.user); ok {
			out.Events = append(out.Events, e)
		}
	}
	if next != nil {
		s := next.Cursor()
		out.Next = &s
	}
	return writeJSON(w, http.StatusOK, out)
}

func historyEvent(it schema.AuditItem, caller domain.User) (HistoryEvent, bool) {
	typ, ok := historyTypes[events.EventType(it.Type)]
	if !ok {
		return HistoryEvent{}, false
	}
	at, err := it.Time()
	if err != nil {
		return HistoryEvent{}, false
	}
	e := HistoryEvent{Type: typ, At: formatTime(at), UserName: it.UserName, FromFrame: it.FromFrame,
		Yours: caller.ID != "" && it.UserID == caller.ID}
	if typ == "calibrated" || typ == "uncalibrated" {
		e.Calibration = it.Calibration
		return e, true
	}
	if it.TrimEnd > 0 {
		e.Settings = &HistorySettings{Trim: TrimView{Start: it.TrimStart, End: it.TrimEnd}, CaptureInterval: max(it.CaptureInterval, 1)}
	}
	if typ == "started" && it.LastFrame > 0 && it.LastFrame >= it.FirstFrame {
		// The frames the trace was planned to trace (events.Derive).
		first, last := it.FirstFrame, it.LastFrame
		e.FirstFrame, e.LastFrame = &first, &last
	}
	if typ != "started" {
		n := it.Frames
		e.Frames = &n
		if n == 1 || (n > 1 && it.LastFrame > it.FirstFrame) {
			first, last := it.FirstFrame, it.LastFrame
			e.FirstFrame, e.LastFrame = &first, &last
		}
	}
	if typ == "failed" || typ == "stopped" {
		e.Summary = domain.SanitizeSummary(it.Summary)
	}
	return e, true
}

package domain

import (
	"math"
	"regexp"
	"time"
	"unicode"
	"unicode/utf8"
)

// Status is the stored lifecycle state of a movie.
type Status string

const (
	StatusReady   Status = "ready"
	StatusTracing Status = "tracing"
	StatusTraced  Status = "traced"
	// StatusFailed covers a caught failure and, as a derived view, a trace whose
	// lease went stale without a terminal write (see Movie.View).
	StatusFailed Status = "tracing_failed"
)

// StalledSummary is the user-facing summary of a trace whose worker stopped
// renewing its lease: the row still says tracing, but the lease is stale.
const StalledSummary = "The trace stopped responding before it finished. Start it again to retrace."

// Movie is the aggregate stored as one row.
type Movie struct {
	ID         string
	Title      string
	FrameCount int     // frames in the video: valid frame indices are [0, FrameCount)
	FrameRate  float64 // frames per second, for playback
	Status     Status
	Settings   Settings
	// Lease is the current lease, possibly stale; use LiveLease to read it.
	Lease    *Lease
	Progress Progress
	// CleanBefore: every stored frame with an index below it was written by a
	// trace that completed with the current capture grid. A trace never starts
	// above it, so frames of a dead or failed job are always retraced.
	CleanBefore int
	LastJob     *JobRecord
	// Video is what the ingest probed (nil before); Upload the file the
	// movie was created for (nil for movies seeded without one);
	// IngestFailure the user-facing summary of a failed or expired upload.
	Video         *Video
	Upload        *Upload
	IngestFailure string
	// Calibration is the movie's scale and coordinate system (nil: results
	// are in pixels, from the frame's top-left corner, y down).
	Calibration *Calibration
	// Version grows by one on every committed change: a fencing number and the
	// order of the row's history.
	Version   int64
	UpdatedAt time.Time
}

// Settings are the analysis settings edited in Analyze.
type Settings struct {
	Markers         []Marker
	Trim            Trim
	CaptureInterval int // trace every Nth frame, N >= 1
	// Keys are the user's corrections, key frames of their markers (see
	// Key), in the stored order; nil when there are none.
	Keys []Key
}

// Trim is the half-open frame range [Start, End) that tracing covers.
type Trim struct {
	Start int
	End   int
}

// Marker is a point to follow, placed on frame Frame, in coordinates
// normalised to [0, 1] of the frame's width and height. The marker belongs
// to that frame: tracing follows it from there on (its first key frame, see
// MarkerKeys), and has no point for it on the frames before.
type Marker struct {
	ID    string
	Label string
	X, Y  float64
	Frame int
}

// Progress is what a running (or the last) trace has written.
type Progress struct {
	FramesWritten int
	TotalFrames   int
}

// JobRecord is the outcome of the last trace that reached a terminal state.
type JobRecord struct {
	JobID      string
	Status     Status // StatusTraced or StatusFailed
	UserID     string
	UserName   string
	FromFrame  int
	StartedAt  time.Time
	FinishedAt time.Time
	Frames     int
	// FailureSummary is sanitized (see SanitizeSummary) and user-facing.
	FailureSummary string
	// Quality is each marker's quality over the trace (TraceQuality), for
	// a completed job whose worker could read its frames; else nil.
	Quality []MarkerQuality
}

// Limits on what a client can store; they keep rows far below DynamoDB's
// 400 KB item limit and pages fast.
const (
	MaxMarkers         = 32
	MaxMarkerLabel     = 64
	MaxCaptureInterval = 10_000
	MaxFrameCount      = 10_000_000
	MaxTitle           = 200
)

var movieIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// ValidMovieID reports whether id is a well-formed movie ID (1-64 of
// [A-Za-z0-9_-], starting alphanumeric), so it is safe in keys and logs.
func ValidMovieID(id string) bool { return movieIDPattern.MatchString(id) }

// NewMovie returns a movie ready to analyse: the whole video trimmed in,
// every frame captured, no markers, no lease.
func NewMovie(id, title string, frameCount int, frameRate float64, now time.Time) (Movie, error) {
	switch {
	case !ValidMovieID(id):
		return Movie{}, Invalid("id", "must be 1-64 of A-Z a-z 0-9 _ -")
	case title == "" || len(title) > MaxTitle:
		return Movie{}, Invalid("title", "must be 1-%d bytes", MaxTitle)
	case frameCount < 1 || frameCount > MaxFrameCount:
		return Movie{}, Invalid("frameCount", "must be 1-%d", MaxFrameCount)
	case !(frameRate > 0 && frameRate <= 1000):
		return Movie{}, Invalid("frameRate", "must be in (0, 1000]")
	}
	return Movie{
		ID: id, Title: title, FrameCount: frameCount, FrameRate: frameRate,
		Status:    StatusReady,
		Settings:  Settings{Markers: []Marker{}, Trim: Trim{0, frameCount}, CaptureInterval: 1},
		Version:   1,
		UpdatedAt: now,
	}, nil
}

// LiveLease returns the lease if it is live at now, else nil: a stale lease
// is absent to every reader.
func (m Movie) LiveLease(now time.Time) *Lease {
	if m.Lease.LiveAt(now) {
		return m.Lease
	}
	return nil
}

// Holder describes the live lease's holder for list and metadata responses
// (the API calls it the movie's "lock"), or nil.
func (m Movie) Holder(now time.Time) *Holder {
	if l := m.LiveLease(now); l != nil {
		h := l.holder()
		return &h
	}
	return nil
}

// View is what readers are shown at now. It differs from the stored row in
// one way: a movie stored as tracing whose tracing lease is no longer live is
// shown as tracing_failed (with a StalledSummary job while the stale lease is
// on the row), because no worker can finish that job any more: its writes are
// fenced on the live lease.
type View struct {
	Status   Status
	Holder   *Holder
	Progress Progress
	LastJob  *JobRecord
}

// View derives what readers see at now.
func (m Movie) View(now time.Time) View {
	v := View{Status: m.Status, Holder: m.Holder(now), Progress: m.Progress, LastJob: m.LastJob}
	live := m.LiveLease(now)
	if m.Status == StatusTracing && (live == nil || live.Kind != LeaseTracing) {
		v.Status = StatusFailed
		// While the stale tracing lease is still on the row, the stalled job
		// is the last job. Once an opener replaced it, the row no longer holds
		// that job (the audit table does, as movie.tracing.abandoned), so the
		// recorded last job stays.
		if l := m.Lease; l != nil && l.Kind == LeaseTracing {
			stalled := l.Outcome(l.ExpiresAt, StatusFailed, m.Progress.FramesWritten, StalledSummary)
			v.LastJob = &stalled
		}
	}
	return v
}

// ValidateMarkers checks a marker list on its own: at most MaxMarkers, unique
// non-empty IDs, labels of at most MaxMarkerLabel bytes of printable text
// (valid UTF-8, no control or format characters: a label is shown to other
// users, so it may not reorder or hide text around it), coordinates inside
// the frame.
func ValidateMarkers(markers []Marker) error {
	if len(markers) > MaxMarkers {
		return Invalid("markers", "at most %d markers", MaxMarkers)
	}
	seen := make(map[string]bool, len(markers))
	for _, mk := range markers {
		switch {
		case mk.ID == "" || len(mk.ID) > MaxMarkerLabel || !movieIDPattern.MatchString(mk.ID):
			return Invalid("markers.id", "must be 1-%d of A-Z a-z 0-9 _ -", MaxMarkerLabel)
		case seen[mk.ID]:
			return Invalid("markers.id", "duplicate marker ID %q", mk.ID)
		case len(mk.Label) > MaxMarkerLabel:
			return Invalid("markers.label", "at most %d bytes", MaxMarkerLabel)
		case !printable(mk.Label):
			return Invalid("markers.label", "must be printable text")
		case !unit(mk.X) || !unit(mk.Y):
			return Invalid("markers.x", "coordinates must be within [0, 1]")
		case mk.Frame < 0 || mk.Frame >= MaxFrameCount:
			return Invalid("markers.frame", "must be 0-%d", MaxFrameCount-1)
		}
		seen[mk.ID] = true
	}
	return nil
}

func unit(f float64) bool { return !math.IsNaN(f) && f >= 0 && f <= 1 }

// printable reports whether s is valid UTF-8 made of printable runes only
// (unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the
// ASCII space).
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// ValidateTrim checks a trim on its own; that End fits the movie is part of
// the edit's precondition, because only the row knows FrameCount.
func ValidateTrim(t Trim) error {
	if t.Start < 0 || t.End <= t.Start || t.End > MaxFrameCount {
		return Invalid("trim", "need 0 <= start < end")
	}
	return nil
}

// ValidateCaptureInterval checks 1 <= n <= MaxCaptureInterval.
func ValidateCaptureInterval(n int) error {
	if n < 1 || n > MaxCaptureInterval {
		return Invalid("captureInterval", "must be 1-%d", MaxCaptureInterval)
	}
	return nil
}

package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
)

// Response bodies. They are built from domain values here and nowhere else,
// so that no lease ID can slip into one by a struct gaining a field.

// formatTime is every time in the API: events.TimeLayout (RFC 3339, UTC,
// milliseconds), the same as in the audit table.
func formatTime(t time.Time) string { return events.FormatTime(t) }

// HolderView is a live lease's holder as others may see it: never the
// lease's ID, never the holder's user ID. Movie responses carry it as
// "lock" (the API's name, kept for clients), problems as "holder".
type HolderView struct {
	Kind      domain.LeaseKind `json:"kind"`
	UserName  string           `json:"userName"`
	StartedAt string           `json:"startedAt"`
	// LastActiveAt is the editor's last edit (the lock's start before the
	// first) or a trace's last progress, and ExpiresAt when the lease lapses
	// unless renewed. Heartbeats are not activity: an open, idle tab is not
	// "active". Absent in problems.
	LastActiveAt string `json:"lastActiveAt,omitempty"`
	ExpiresAt    string `json:"expiresAt,omitempty"`
	// ReleaseAsk is a viewer's request that the editor release the movie
	// (absent: none).
	ReleaseAsk *ReleaseAskView `json:"releaseAsk,omitempty"`
	// Yours is true when the caller is the holder (another tab of theirs, or
	// the trace they started). Absent in problems.
	Yours bool `json:"yours,omitempty"`
}

// ReleaseAskView is who asked the editor to release the movie, and when.
type ReleaseAskView struct {
	UserName string `json:"userName"`
	At       string `json:"at"`
}

func holderView(h domain.Holder) HolderView {
	return HolderView{Kind: h.Kind, UserName: h.UserName, StartedAt: formatTime(h.StartedAt)}
}

// liveHolder is the holder of m's live lease at now as caller may see it, or nil.
func liveHolder(m domain.Movie, now time.Time, caller domain.User) *HolderView {
	h := m.Holder(now)
	if h == nil {
		return nil
	}
	v := holderView(*h)
	if l := m.LiveLease(now); l != nil {
		active := l.HeartbeatAt // a trace's heartbeat is its progress
		if l.Kind == domain.LeaseAnalysis {
			active = l.AcquiredAt
			if l.EditedAt.After(active) {
				active = l.EditedAt
			}
		}
		v.LastActiveAt = formatTime(active)
		v.ExpiresAt = formatTime(l.ExpiresAt)
		if a := l.ReleaseAsk; a != nil && l.Kind == domain.LeaseAnalysis {
			v.ReleaseAsk = &ReleaseAskView{UserName: a.UserName, At: formatTime(a.At)}
		}
	}
	v.Yours = caller.ID != "" && h.UserID == caller.ID
	return &v
}

// ProgressView is a trace's progress.
type ProgressView struct {
	FramesWritten int `json:"framesWritten"`
	TotalFrames   int `json:"totalFrames"`
}

// MovieSummary is one entry of GET /movies.
type MovieSummary struct {
	ID       string        `json:"id"`
	Title    string        `json:"title"`
	Status   domain.Status `json:"status"`
	Progress ProgressView  `json:"progress"`
	// Lock is the live lease's holder, or nil (wire name "lock").
	Lock *HolderView `json:"lock"`
	// FrameCount is the movie's length, so that a list can say how much of
	// the movie (not only of the last trace) is traced.
	FrameCount int `json:"frameCount"`
	// TracedFrames is how many traced frames the movie stores
	// (domain.Movie.TracedFrames): what GET /movies/{id}/frames returns
	// and a download holds. Every sentence about frames starts from it.
	TracedFrames int `json:"tracedFrames"`
	// Quality is the last completed trace's quality per marker, one
	// sentence each; absent when it recorded none.
	Quality []string `json:"quality,omitempty"`
	// Video (null until ingested) gives the list its size and duration; a
	// thumbnail is frame 0's image. AddedBy is who created the movie.
	Video   *VideoView `json:"video"`
	AddedBy *UserView  `json:"addedBy,omitempty"`
}

// UserView names a user as the caller sees them.
type UserView struct {
	UserName string `json:"userName"`
	Yours    bool   `json:"yours"`
}

func addedBy(m domain.Movie, caller domain.User) *UserView {
	if m.Upload == nil || m.Upload.AddedBy.Name == "" {
		return nil
	}
	a := m.Upload.AddedBy
	return &UserView{UserName: a.Name, Yours: caller.ID != "" && a.ID == caller.ID}
}

// MovieList is GET /movies.
type MovieList struct {
	Movies []MovieSummary `json:"movies"`
}

// MarkerView is a marker.
type MarkerView struct {
	ID    string  `json:"id"`
	Label string  `json:"label"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	// Frame is the frame the marker was placed on: it is tracked from there.
	Frame int `json:"frame"`
}

// KeyView is a key frame: the user's correction of a marker on a frame.
type KeyView struct {
	MarkerID string  `json:"markerId"`
	Frame    int     `json:"frame"`
	X        float64 `json:"x"`
	Y        float64 `json:"y"`
}

// TrimView is the traced range [start, end).
type TrimView struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// JobView is the last trace that finished (or stalled).
type JobView struct {
	JobID          string        `json:"jobId"`
	Status         domain.Status `json:"status"`
	FromFrame      int           `json:"fromFrame"`
	StartedAt      string        `json:"startedAt"`
	FinishedAt     string        `json:"finishedAt"`
	Frames         int           `json:"frames"`
	FailureSummary string        `json:"failureSummary,omitempty"`
	UserName       string        `json:"userName"`
	// Yours is true when the caller started this trace.
	Yours bool `json:"yours,omitempty"`
	// Quality is each marker's quality over a completed trace
	// (domain.TraceQuality); absent when the job recorded none.
	Quality []QualityView `json:"quality,omitempty"`
}

// QualityView is one marker's quality over the last trace.
type QualityView struct {
	MarkerID  string `json:"markerId"`
	Label     string `json:"label"`
	Frames    int    `json:"frames"`
	Lost      int    `json:"lost"`
	Uncertain int    `json:"uncertain"`
	// MergedWith and MergedAt: the marker it first merged with, and on
	// which frame; absent when it never did.
	MergedWith string `json:"mergedWith,omitempty"`
	MergedAt   *int   `json:"mergedAt,omitempty"`
	// Summary says it in one sentence ("Head: lost in 12% of frames,
	// uncertain in 5%, merged with Tail at frame 36").
	Summary string `json:"summary"`
}

// qualityViews is the view of the last job's quality.
func qualityViews(m domain.Movie, j *domain.JobRecord) []QualityView {
	if j == nil || len(j.Quality) == 0 {
		return nil
	}
	sentences := domain.QualitySentences(m.Settings.Markers, j.Quality)
	out := make([]QualityView, len(j.Quality))
	for i, q := range j.Quality {
		out[i] = QualityView{MarkerID: q.MarkerID, Label: markerLabel(m, q.MarkerID), Frames: q.Frames, Lost: q.Lost, Uncertain: q.Uncertain, Summary: sentences[i]}
		if q.MergedWith != "" {
			at := q.MergedAt
			out[i].MergedWith, out[i].MergedAt = q.MergedWith, &at
		}
	}
	return out
}

// qualitySentences are the sentences of the last job's quality (nil when
// it recorded none).
func qualitySentences(m domain.Movie, j *domain.JobRecord) []string {
	if j == nil || len(j.Quality) == 0 {
		return nil
	}
	return domain.QualitySentences(m.Settings.Markers, j.Quality)
}

// MovieDetail is GET /movies/{id} and the 200 of every edit.
type MovieDetail struct {
	ID           string        `json:"id"`
	Title        string        `json:"title"`
	Status       domain.Status `json:"status"`
	Progress     ProgressView  `json:"progress"`
	Lock         *HolderView   `json:"lock"`
	FrameCount   int           `json:"frameCount"`
	TracedFrames int           `json:"tracedFrames"`
	// ResultsStale: the markers, trim or capture interval changed after the
	// last trace started (domain.Movie.ResultsStale).
	ResultsStale    bool         `json:"resultsStale"`
	FrameRate       float64      `json:"frameRate"`
	Markers         []MarkerView `json:"markers"`
	Keys            []KeyView    `json:"keys"`
	Trim            TrimView     `json:"trim"`
	CaptureInterval int          `json:"captureInterval"`
	LastJob         *JobView     `json:"lastJob"`
	Version         int64        `json:"version"`
	// Video is what the ingest probed; null until the movie is ready.
	Video *VideoView `json:"video"`
	// Upload is the file the movie was created for (absent for movies
	// seeded without one); IngestFailure says why it cannot be analysed.
	Upload        *UploadInfoView `json:"upload,omitempty"`
	IngestFailure string          `json:"ingestFailure,omitempty"`
	// Calibration is the movie's scale and coordinate system (null: none;
	// results are in pixels from the top-left corner, y down).
	Calibration *CalibrationView `json:"calibration"`
	// Restart says what a retrace does with the frames an unfinished trace
	// left (domain.RestartOf); absent when there is nothing to say.
	Restart *RestartView `json:"restart,omitempty"`
}

// RestartView is domain.Restart on the wire.
type RestartView struct {
	Resumes    bool `json:"resumes,omitempty"`
	ResumeFrom int  `json:"resumeFrom,omitempty"`
	Replaces   bool `json:"replaces,omitempty"`
}

func restartView(m domain.Movie, now time.Time) *RestartView {
	r := domain.RestartOf(m, now)
	if r == (domain.Restart{}) {
		return nil
	}
	return &RestartView{Resumes: r.Resumes, ResumeFrom: r.ResumeFrom, Replaces: r.Replaces}
}

// VideoView is an ingested movie's video; frame n's image is
// GET /movies/{id}/frames/{n}/image for 0 <= n < frameCount.
type VideoView struct {
	Width           int     `json:"width"`
	Height          int     `json:"height"`
	FrameCount      int     `json:"frameCount"`
	FrameRate       float64 `json:"frameRate"`
	Codec           string  `json:"codec"`
	DurationSeconds float64 `json:"durationSeconds"`
	// ChunkFrames is the rendition's frames per chunk: frame n is in chunk
	// n / chunkFrames (GET /movies/{id}/chunks/{k}). 0 for a movie ingested
	// before chunks were recorded.
	ChunkFrames int `json:"chunkFrames,omitempty"`
}

// ChunkView is chunk k of a movie's rendition: frames firstFrame to
// firstFrame+frameCount-1, an H.264 MP4 that decodes on its own, at a
// presigned URL valid until expiresAt.
type ChunkView struct {
	Chunk      int    `json:"chunk"`
	FirstFrame int    `json:"firstFrame"`
	FrameCount int    `json:"frameCount"`
	URL        string `json:"url"`
	ExpiresAt  string `json:"expiresAt"`
}

// UploadInfoView is the announced file.
type UploadInfoView struct {
	FileName    string    `json:"fileName"`
	ContentType string    `json:"contentType"`
	SizeBytes   int64     `json:"sizeBytes"`
	ExpiresAt   string    `json:"expiresAt"`
	AddedBy     *UserView `json:"addedBy,omitempty"`
}

func videoView(m domain.Movie) *VideoView {
	if m.Video == nil {
		return nil
	}
	v := m.Video
	return &VideoView{Width: v.Width, Height: v.Height, FrameCount: m.FrameCount, FrameRate: m.FrameRate,
		Codec: v.Codec, DurationSeconds: v.DurationSeconds, ChunkFrames: v.ChunkFrames}
}

func uploadInfo(m domain.Movie, caller domain.User) *UploadInfoView {
	if m.Upload == nil {
		return nil
	}
	u := m.Upload
	return &UploadInfoView{FileName: u.FileName, ContentType: u.ContentType, SizeBytes: u.SizeBytes, ExpiresAt: formatTime(u.ExpiresAt),
		AddedBy: addedBy(m, caller)}
}

func summary(m domain.Movie, now time.Time, caller domain.User) MovieSummary {
	v := m.View(now)
	return MovieSummary{
		ID: m.ID, Title: m.Title, Status: v.Status,
		Progress:     ProgressView{FramesWritten: v.Progress.FramesWritten, TotalFrames: v.Progress.TotalFrames},
		Lock:         liveHolder(m, now, caller),
		FrameCount:   m.FrameCount,
		TracedFrames: m.TracedFrames(),
		Quality:      qualitySentences(m, v.LastJob),
		Video:        videoView(m),
		AddedBy:      addedBy(m, caller),
	}
}

func detail(m domain.Movie, now time.Time, caller domain.User) MovieDetail {
	v := m.View(now)
	d := MovieDetail{
		ID: m.ID, Title: m.Title, Status: v.Status,
		Progress:        ProgressView{FramesWritten: v.Progress.FramesWritten, TotalFrames: v.Progress.TotalFrames},
		Lock:            liveHolder(m, now, caller),
		FrameCount:      m.FrameCount,
		TracedFrames:    m.TracedFrames(),
		ResultsStale:    m.ResultsStale(),
		FrameRate:       m.FrameRate,
		Markers:         make([]MarkerView, len(m.Settings.Markers)),
		Keys:            make([]KeyView, len(m.Settings.Keys)),
		Trim:            TrimView{Start: m.Settings.Trim.Start, End: m.Settings.Trim.End},
		CaptureInterval: m.Settings.CaptureInterval,
		Version:         m.Version,
		Video:           videoView(m),
		Upload:          uploadInfo(m, caller),
		IngestFailure:   m.IngestFailure,
		Calibration:     calibrationView(m),
		Restart:         restartView(m, now),
	}
	for i, mk := range m.Settings.Markers {
		d.Markers[i] = MarkerView{ID: mk.ID, Label: mk.Label, X: mk.X, Y: mk.Y, Frame: mk.Frame}
	}
	for i, k := range m.Settings.Keys {
		d.Keys[i] = KeyView{MarkerID: k.MarkerID, Frame: k.Frame, X: k.X, Y: k.Y}
	}
	if j := v.LastJob; j != nil {
		d.LastJob = &JobView{
			JobID: j.JobID, Status: j.Status, FromFrame: j.FromFrame,
			StartedAt: formatTime(j.StartedAt), FinishedAt: formatTime(j.FinishedAt),
			Frames: j.Frames, FailureSummary: j.FailureSummary, UserName: j.UserName,
			Yours:   caller.ID != "" && j.UserID == caller.ID,
			Quality: qualityViews(m, j),
		}
	}
	return d
}

// LeaseGrant is the 201 of POST /movies/{id}/analysis-lease: the only
// response that ever carries an analysis lease ID.
type LeaseGrant struct {
	LeaseID      string `json:"leaseId"`
	ExpiresAt    string `json:"expiresAt"`
	LeaseSeconds int    `json:"leaseSeconds"`
	// IdleSeconds is how long the page lets its editor go without an edit
	// before it asks "Still editing?" (and releases if nobody answers).
	IdleSeconds int `json:"idleSeconds"`
}

// LeaseRenewal is the 200 of a heartbeat.
type LeaseRenewal struct {
	ExpiresAt string `json:"expiresAt"`
}

// TraceStarted is the 202 of POST /movies/{id}/traces. JobID is the new
// tracing lease's ID; the caller's analysis lease is gone.
type TraceStarted struct {
	JobID   string        `json:"jobId"`
	Status  domain.Status `json:"status"`
	Version int64         `json:"version"`
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
	return nil
}

package schema

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/domain"
)

// LeaseItem is the stored lease map. Times are Unix milliseconds so that
// conditions compare numbers ("lease.expiresAt > :now").
type LeaseItem struct {
	Kind        string `dynamodbav:"kind"`
	ID          string `dynamodbav:"id"`
	UserID      string `dynamodbav:"userId"`
	UserName    string `dynamodbav:"userName"`
	AcquiredAt  int64  `dynamodbav:"acquiredAt"`
	HeartbeatAt int64  `dynamodbav:"heartbeatAt"`
	ExpiresAt   int64  `dynamodbav:"expiresAt"`
	Claimed     bool   `dynamodbav:"claimed"`
	ClaimToken  string `dynamodbav:"claimToken,omitempty"`
	FromFrame   int    `dynamodbav:"fromFrame"`
	// Segment is absent for a job's first segment.
	Segment int `dynamodbav:"segment,omitempty"`
	// PlanFrom is the first frame of the job's plan (0 until it is made).
	PlanFrom int `dynamodbav:"planFrom"`
	// EditedAt is the holder's last edit (absent: none yet).
	EditedAt int64 `dynamodbav:"editedAt,omitempty"`
	// ReleaseAsk is a viewer's request to release (absent: none).
	ReleaseAsk *ReleaseAskItem `dynamodbav:"releaseAsk,omitempty"`
}

// ReleaseAskItem is a stored domain.ReleaseAsk; At in Unix ms.
type ReleaseAskItem struct {
	UserName string `dynamodbav:"userName"`
	At       int64  `dynamodbav:"at"`
}

// NewReleaseAskItem converts a release request to its stored form.
func NewReleaseAskItem(a domain.ReleaseAsk) ReleaseAskItem {
	return ReleaseAskItem{UserName: a.UserName, At: Millis(a.At)}
}

// optMillis stores a zero time as 0 (absent with omitempty).
func optMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return Millis(t)
}

func fromOptMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return FromMillis(ms)
}

// JobItem is the stored outcome of the last finished job.
type JobItem struct {
	JobID          string `dynamodbav:"jobId"`
	Status         string `dynamodbav:"status"`
	UserID         string `dynamodbav:"userId"`
	UserName       string `dynamodbav:"userName"`
	FromFrame      int    `dynamodbav:"fromFrame"`
	StartedAt      int64  `dynamodbav:"startedAt"`
	FinishedAt     int64  `dynamodbav:"finishedAt"`
	Frames         int    `dynamodbav:"frames"`
	FailureSummary string `dynamodbav:"failureSummary,omitempty"`
	// Quality is absent when the job recorded none.
	Quality []QualityItem `dynamodbav:"quality,omitempty"`
}

// QualityItem is one marker's stored quality (domain.MarkerQuality).
type QualityItem struct {
	MarkerID   string `dynamodbav:"markerId"`
	Frames     int    `dynamodbav:"frames"`
	Lost       int    `dynamodbav:"lost"`
	Uncertain  int    `dynamodbav:"uncertain"`
	MergedWith string `dynamodbav:"mergedWith,omitempty"`
	MergedAt   int    `dynamodbav:"mergedAt,omitempty"`
}

func newQualityItems(qs []domain.MarkerQuality) []QualityItem {
	if qs == nil {
		return nil
	}
	out := make([]QualityItem, len(qs))
	for i, q := range qs {
		out[i] = QualityItem{MarkerID: q.MarkerID, Frames: q.Frames, Lost: q.Lost, Uncertain: q.Uncertain, MergedWith: q.MergedWith, MergedAt: q.MergedAt}
	}
	return out
}

func qualityOf(items []QualityItem) []domain.MarkerQuality {
	if items == nil {
		return nil
	}
	out := make([]domain.MarkerQuality, len(items))
	for i, q := range items {
		out[i] = domain.MarkerQuality{MarkerID: q.MarkerID, Frames: q.Frames, Lost: q.Lost, Uncertain: q.Uncertain, MergedWith: q.MergedWith, MergedAt: q.MergedAt}
	}
	return out
}

// VideoItem is what the ingest probed.
type VideoItem struct {
	Width           int     `dynamodbav:"width"`
	Height          int     `dynamodbav:"height"`
	Codec           string  `dynamodbav:"codec"`
	DurationSeconds float64 `dynamodbav:"durationSeconds"`
	ChunkFrames     int     `dynamodbav:"chunkFrames,omitempty"`
	SourceWidth     int     `dynamodbav:"sourceWidth,omitempty"`
	SourceHeight    int     `dynamodbav:"sourceHeight,omitempty"`
	Rotation        int     `dynamodbav:"rotation,omitempty"`
	Rendition       string  `dynamodbav:"rendition,omitempty"`
}

// UploadItem is the file a movie was created for; ExpiresAt in Unix ms.
type UploadItem struct {
	FileName    string `dynamodbav:"fileName"`
	ContentType string `dynamodbav:"contentType"`
	SizeBytes   int64  `dynamodbav:"sizeBytes"`
	ExpiresAt   int64  `dynamodbav:"expiresAt"`
	// AddedByID and AddedByName: who created the movie.
	AddedByID   string `dynamodbav:"addedById,omitempty"`
	AddedByName string `dynamodbav:"addedByName,omitempty"`
}

// NewVideoItem converts the domain's video to its stored form.
func NewVideoItem(v domain.Video) VideoItem {
	return VideoItem{Width: v.Width, Height: v.Height, Codec: v.Codec, DurationSeconds: v.DurationSeconds,
		ChunkFrames: v.ChunkFrames, SourceWidth: v.SourceWidth, SourceHeight: v.SourceHeight, Rotation: v.Rotation, Rendition: v.Rendition}
}

// MarkerItem is one stored marker.
type MarkerItem struct {
	ID    string  `dynamodbav:"id"`
	Label string  `dynamodbav:"label"`
	X     float64 `dynamodbav:"x"`
	Y     float64 `dynamodbav:"y"`
	// Frame is the frame the marker was placed on (absent: 0).
	Frame int `dynamodbav:"frame,omitempty"`
}

// KeyItem is one stored key frame (domain.Key).
type KeyItem struct {
	MarkerID string  `dynamodbav:"markerId"`
	Frame    int     `dynamodbav:"frame"`
	X        float64 `dynamodbav:"x"`
	Y        float64 `dynamodbav:"y"`
}

// NewKeyItems converts key frames to their stored form.
func NewKeyItems(ks []domain.Key) []KeyItem {
	out := make([]KeyItem, len(ks))
	for i, k := range ks {
		out[i] = KeyItem{MarkerID: k.MarkerID, Frame: k.Frame, X: k.X, Y: k.Y}
	}
	return out
}

// MovieItem is the stored movie row.
type MovieItem struct {
	MovieID         string       `dynamodbav:"movieId"`
	Title           string       `dynamodbav:"title"`
	FrameCount      int          `dynamodbav:"frameCount"`
	FrameRate       float64      `dynamodbav:"frameRate"`
	Status          string       `dynamodbav:"status"`
	Markers         []MarkerItem `dynamodbav:"markers"`
	Keys            []KeyItem    `dynamodbav:"keys,omitempty"`
	TrimStart       int          `dynamodbav:"trimStart"`
	TrimEnd         int          `dynamodbav:"trimEnd"`
	CaptureInterval int          `dynamodbav:"captureInterval"`
	Lease           *LeaseItem   `dynamodbav:"lease,omitempty"`
	FramesWritten   int          `dynamodbav:"framesWritten"`
	TotalFrames     int          `dynamodbav:"totalFrames"`
	CleanBefore     int          `dynamodbav:"cleanBefore"`
	KeptFrames      int          `dynamodbav:"keptFrames"`
	// SettingsChangedAt: Unix ms of the last settings edit (absent: never).
	SettingsChangedAt int64            `dynamodbav:"settingsChangedAt,omitempty"`
	LastJob           *JobItem         `dynamodbav:"lastJob,omitempty"`
	Version           int64            `dynamodbav:"version"`
	UpdatedAt         int64            `dynamodbav:"updatedAt"`
	Video             *VideoItem       `dynamodbav:"video,omitempty"`
	Upload            *UploadItem      `dynamodbav:"upload,omitempty"`
	IngestFailure     string           `dynamodbav:"ingestFailure,omitempty"`
	Calibration       *CalibrationItem `dynamodbav:"calibration,omitempty"`
}

// Millis is the stored form of a time: Unix milliseconds.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// FromMillis is the inverse of Millis, in UTC.
func FromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// NewLeaseItem converts a domain lease to its stored form.
func NewLeaseItem(l domain.Lease) LeaseItem {
	it := LeaseItem{
		Kind: string(l.Kind), ID: l.ID, UserID: l.UserID, UserName: l.UserName,
		AcquiredAt: Millis(l.AcquiredAt), HeartbeatAt: Millis(l.HeartbeatAt), ExpiresAt: Millis(l.ExpiresAt),
		Claimed: l.Claimed, ClaimToken: l.ClaimToken, FromFrame: l.FromFrame, Segment: l.Segment,
		PlanFrom: l.PlanFrom, EditedAt: optMillis(l.EditedAt),
	}
	if l.ReleaseAsk != nil {
		a := NewReleaseAskItem(*l.ReleaseAsk)
		it.ReleaseAsk = &a
	}
	return it
}

// Lease converts a stored lease to the domain's.
func (l LeaseItem) Lease() domain.Lease {
	out := domain.Lease{
		Kind: domain.LeaseKind(l.Kind), ID: l.ID, UserID: l.UserID, UserName: l.UserName,
		AcquiredAt: FromMillis(l.AcquiredAt), HeartbeatAt: FromMillis(l.HeartbeatAt), ExpiresAt: FromMillis(l.ExpiresAt),
		Claimed: l.Claimed, ClaimToken: l.ClaimToken, FromFrame: l.FromFrame, Segment: l.Segment,
		PlanFrom: l.PlanFrom, EditedAt: fromOptMillis(l.EditedAt),
	}
	if a := l.ReleaseAsk; a != nil {
		out.ReleaseAsk = &domain.ReleaseAsk{UserName: a.UserName, At: FromMillis(a.At)}
	}
	return out
}

// NewJobItem converts a domain job record to its stored form.
func NewJobItem(j domain.JobRecord) JobItem {
	return JobItem{
		JobID: j.JobID, Status: string(j.Status), UserID: j.UserID, UserName: j.UserName,
		FromFrame: j.FromFrame, StartedAt: Millis(j.StartedAt), FinishedAt: Millis(j.FinishedAt),
		Frames: j.Frames, FailureSummary: j.FailureSummary, Quality: newQualityItems(j.Quality),
	}
}

// Job converts a stored job record to the domain's.
func (j JobItem) Job() domain.JobRecord {
	return domain.JobRecord{
		JobID: j.JobID, Status: domain.Status(j.Status), UserID: j.UserID, UserName: j.UserName,
		FromFrame: j.FromFrame, StartedAt: FromMillis(j.StartedAt), FinishedAt: FromMillis(j.FinishedAt),
		Frames: j.Frames, FailureSummary: j.FailureSummary, Quality: qualityOf(j.Quality),
	}
}

// NewMarkerItems converts markers to their stored form (never nil, so the
// attribute is always a list and "size(markers)" is defined).
func NewMarkerItems(ms []domain.Marker) []MarkerItem {
	out := make([]MarkerItem, len(ms))
	for i, m := range ms {
		out[i] = MarkerItem{ID: m.ID, Label: m.Label, X: m.X, Y: m.Y, Frame: m.Frame}
	}
	return out
}

// NewMovieItem converts a movie to its stored row.
func NewMovieItem(m domain.Movie) MovieItem {
	it := MovieItem{
		MovieID: m.ID, Title: m.Title, FrameCount: m.FrameCount, FrameRate: m.FrameRate,
		Status: string(m.Status), Markers: NewMarkerItems(m.Settings.Markers),
		TrimStart: m.Settings.Trim.Start, TrimEnd: m.Settings.Trim.End, CaptureInterval: m.Settings.CaptureInterval,
		FramesWritten: m.Progress.FramesWritten, TotalFrames: m.Progress.TotalFrames,
		CleanBefore: m.CleanBefore, Version: m.Version, UpdatedAt: Millis(m.UpdatedAt),
		KeptFrames: m.KeptFrames, SettingsChangedAt: optMillis(m.SettingsChangedAt),
	}
	if len(m.Settings.Keys) > 0 {
		it.Keys = NewKeyItems(m.Settings.Keys)
	}
	if m.Lease != nil {
		l := NewLeaseItem(*m.Lease)
		it.Lease = &l
	}
	if m.LastJob != nil {
		j := NewJobItem(*m.LastJob)
		it.LastJob = &j
	}
	if m.Video != nil {
		v := NewVideoItem(*m.Video)
		it.Video = &v
	}
	if u := m.Upload; u != nil {
		it.Upload = &UploadItem{FileName: u.FileName, ContentType: u.ContentType, SizeBytes: u.SizeBytes, ExpiresAt: Millis(u.ExpiresAt),
			AddedByID: u.AddedBy.ID, AddedByName: u.AddedBy.Name}
	}
	it.IngestFailure = m.IngestFailure
	if m.Calibration != nil {
		c := NewCalibrationItem(*m.Calibration)
		it.Calibration = &c
	}
	return it
}

// Movie converts a stored row to the domain's movie.
func (it MovieItem) Movie() domain.Movie {
	m := domain.Movie{
		ID: it.MovieID, Title: it.Title, FrameCount: it.FrameCount, FrameRate: it.FrameRate,
		Status: domain.Status(it.Status),
		Settings: domain.Settings{
			Markers: make([]domain.Marker, len(it.Markers)),
			Trim:    domain.Trim{Start: it.TrimStart, End: it.TrimEnd}, CaptureInterval: it.CaptureInterval,
		},
		Progress:    domain.Progress{FramesWritten: it.FramesWritten, TotalFrames: it.TotalFrames},
		CleanBefore: it.CleanBefore, Version: it.Version, UpdatedAt: FromMillis(it.UpdatedAt),
		KeptFrames: it.KeptFrames, SettingsChangedAt: fromOptMillis(it.SettingsChangedAt),
	}
	for i, mk := range it.Markers {
		m.Settings.Markers[i] = domain.Marker{ID: mk.ID, Label: mk.Label, X: mk.X, Y: mk.Y, Frame: mk.Frame}
	}
	for _, k := range it.Keys {
		m.Settings.Keys = append(m.Settings.Keys, domain.Key{MarkerID: k.MarkerID, Frame: k.Frame, X: k.X, Y: k.Y})
	}
	if it.Lease != nil {
		l := it.Lease.Lease()
		m.Lease = &l
	}
	if it.LastJob != nil {
		j := it.LastJob.Job()
		m.LastJob = &j
	}
	if v := it.Video; v != nil {
		m.Video = &domain.Video{Width: v.Width, Height: v.Height, Codec: v.Codec, DurationSeconds: v.DurationSeconds,
			ChunkFrames: v.ChunkFrames, SourceWidth: v.SourceWidth, SourceHeight: v.SourceHeight, Rotation: v.Rotation, Rendition: v.Rendition}
	}
	if u := it.Upload; u != nil {
		m.Upload = &domain.Upload{FileName: u.FileName, ContentType: u.ContentType, SizeBytes: u.SizeBytes, ExpiresAt: FromMillis(u.ExpiresAt),
			AddedBy: domain.User{ID: u.AddedByID, Name: u.AddedByName}}
	}
	m.IngestFailure = it.IngestFailure
	if it.Calibration != nil {
		c := it.Calibration.Calibration()
		m.Calibration = &c
	}
	return m
}

// MarshalMovie encodes a movie as a DynamoDB item.
func MarshalMovie(m domain.Movie) (map[string]types.AttributeValue, error) {
	return attributevalue.MarshalMap(NewMovieItem(m))
}

// MalformedMovieError is a stored movie item that cannot be read as a
// movie (a row written by a bug or by hand). It is no refusal: the request
// was fine, the stored row is not. MovieID is the row's key when it has a
// readable one. Err may quote stored values: log it redacted.
type MalformedMovieError struct {
	MovieID string
	Err     error
}

func (e *MalformedMovieError) Error() string {
	if e.MovieID == "" {
		return "malformed movie item: " + e.Err.Error()
	}
	return "malformed movie item " + e.MovieID + ": " + e.Err.Error()
}

func (e *MalformedMovieError) Unwrap() error { return e.Err }

// UnmarshalMovie decodes a movie item (from GetItem, ALL_OLD/ALL_NEW or a
// converted stream image). An item that does not decode, or has no movie
// ID, is a *MalformedMovieError.
func UnmarshalMovie(item map[string]types.AttributeValue) (domain.Movie, error) {
	var id string
	if v, ok := item[AttrMovieID].(*types.AttributeValueMemberS); ok && domain.ValidMovieID(v.Value) {
		id = v.Value
	}
	var it MovieItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return domain.Movie{}, &MalformedMovieError{MovieID: id, Err: err}
	}
	if it.MovieID == "" {
		return domain.Movie{}, &MalformedMovieError{Err: fmt.Errorf("no %s", AttrMovieID)}
	}
	return it.Movie(), nil
}

package domain

import (
	"fmt"
	"mime"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The movie lifecycle before analysis: a movie is created awaiting its
// upload, and the ingest of the uploaded file makes it ready or
// ingest_failed; an upload that never arrives expires (the sweeper), and a
// movie without a live lease can be deleted.
//
//	CreateMovie -> awaiting_upload -> CompleteIngest -> ready (-> tracing ...)
//	                               -> FailIngest     -> ingest_failed
//	                               -> ExpireUpload   -> ingest_failed
//	DeleteMovie: any status, no live lease -> deleting -> PurgeMovie (the
//	row goes once its files and frames are gone; deletion.go).
const (
	StatusAwaitingUpload Status = "awaiting_upload"
	StatusIngestFailed   Status = "ingest_failed"
)

// Refusals of the upload lifecycle.
const (
	// CodeFileTooLarge: the announced file exceeds the configured limit.
	CodeFileTooLarge Code = "file_too_large"
	// CodeNotVideo: the announced content type is not a video type.
	CodeNotVideo Code = "unsupported_video_type"
	// CodeNotAwaitingUpload: the movie's upload was already ingested,
	// failed or expired (a redelivered or second upload event).
	CodeNotAwaitingUpload Code = "not_awaiting_upload"
	// CodeMovieNotReady: the movie has no ingested video to analyse.
	CodeMovieNotReady Code = "movie_not_ready"
)

// Limits of an upload.
const (
	MaxFileName = 255
	// ExpiredUploadSummary is the ingest failure of an upload that never
	// arrived.
	ExpiredUploadSummary = "The upload did not arrive in time. Delete this movie and upload the file again."
)

// VideoTypes are the content types an upload may announce.
var VideoTypes = []string{
	"video/mp4", "video/quicktime", "video/x-msvideo", "video/avi", "video/x-matroska", "video/webm",
	"video/mpeg", "video/ogg", "video/x-m4v", "video/3gpp", "video/mp2t",
}

// Video is what the ingest decided about the movie's frames, recorded when
// it completes (frame count and rate are the movie's own FrameCount and
// FrameRate): the rendition's frame size (upright, square pixels: what the
// tracer and the viewer both see), its chunk size, and what the upload was
// (codec, size, display rotation in degrees).
type Video struct {
	Width, Height   int
	Codec           string
	DurationSeconds float64
	// ChunkFrames is the rendition's chunk size (package media); 0 for a
	// movie ingested before renditions, which has none.
	ChunkFrames               int
	SourceWidth, SourceHeight int
	Rotation                  int
	// Rendition is how the chunks were made: RenditionCopy or
	// RenditionX264; "" for a movie ingested before it was recorded.
	Rendition string
}

// The renditions (package media).
const (
	// RenditionCopy: the upload's own H.264 packets, cut into chunks at its
	// keyframes (a keyframe every ChunkFrames frames), each chunk proven to
	// hold the upload's packets and to decode to its frames; a chunk that
	// could not be proven was encoded as RenditionX264 chunks are.
	RenditionCopy = "copy"
	// RenditionX264: the upload decoded and encoded again (libx264) in
	// chunks of ChunkFrames frames.
	RenditionX264 = "x264"
)

// Upload is the file a movie was created for.
type Upload struct {
	FileName    string
	ContentType string
	SizeBytes   int64
	// ExpiresAt: after it, an upload that has not arrived expires.
	ExpiresAt time.Time
	// AddedBy is who created the movie (empty for movies made before it
	// was recorded).
	AddedBy User
}

// CreateMovie creates a movie awaiting its upload. It is stored with a
// conditional put (no movie with that ID): Validate checks the input, Movie
// is the new row.
type CreateMovie struct {
	ID     string
	Title  string
	Upload Upload
	// MaxBytes is the configured size limit of an upload.
	MaxBytes int64
	Now      time.Time
}

func (c CreateMovie) Validate() error {
	if !ValidMovieID(c.ID) {
		return Invalid("id", "must be 1-64 of A-Z a-z 0-9 _ -")
	}
	if err := validateText("title", c.Title, MaxTitle); err != nil {
		return err
	}
	if err := ValidateFileName(c.Upload.FileName); err != nil {
		return err
	}
	if err := ValidateVideoType(c.Upload.ContentType); err != nil {
		return err
	}
	switch {
	case c.MaxBytes <= 0:
		return Invalid("maxBytes", "the size limit must be positive")
	case c.Upload.SizeBytes < 1:
		return Invalid("sizeBytes", "must be at least 1 (an empty file is not a movie)")
	case c.Upload.SizeBytes > c.MaxBytes:
		return &Error{Code: CodeFileTooLarge, Field: "sizeBytes",
			Message: "the file is larger than the limit of " + formatBytes(c.MaxBytes)}
	case !c.Upload.ExpiresAt.After(c.Now):
		return Invalid("expiresAt", "the upload must expire after now")
	}
	return nil
}

// Replays reports whether the stored movie m is this very creation, stored
// already: a retry whose first answer was lost (the store's own, or the
// client's with the same idempotency key, which names the same movie ID).
// It is the put's AlreadyApplied: the same ID, title and announced file,
// still awaiting its upload. It is plain Go rather than a Cond because a
// create is a conditional put, not an UpdateItem: the store compares the row
// its refusal returned (ALL_OLD). A movie whose upload already arrived is no
// replay: its file cannot be uploaded again (a 409).
func (c CreateMovie) Replays(m Movie) bool {
	return m.ID == c.ID && m.Title == c.Title && m.Status == StatusAwaitingUpload && m.Upload != nil &&
		m.Upload.FileName == c.Upload.FileName && m.Upload.ContentType == c.Upload.ContentType && m.Upload.SizeBytes == c.Upload.SizeBytes
}

// Movie is the new row: awaiting its upload, nothing to trace yet.
func (c CreateMovie) Movie() Movie {
	up := c.Upload
	return Movie{
		ID: c.ID, Title: c.Title, Status: StatusAwaitingUpload,
		Settings:  Settings{Markers: []Marker{}, CaptureInterval: 1},
		Upload:    &up,
		Version:   1,
		UpdatedAt: c.Now,
	}
}

// ValidateFileName accepts a plain file name: 1-255 bytes of printable
// UTF-8, no path separator, not "." or "..", no leading or trailing space.
// It is only ever shown back, never used in a key or a path.
func ValidateFileName(name string) error {
	if err := validateText("fileName", name, MaxFileName); err != nil {
		return err
	}
	if strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return Invalid("fileName", "must be a file name without a directory")
	}
	return nil
}

// validateText: 1-max bytes of valid UTF-8, printable (no control, format
// or bidirectional override characters), no leading or trailing space.
func validateText(field, s string, max int) error {
	switch {
	case s == "" || len(s) > max:
		return Invalid(field, "must be 1-%d bytes", max)
	case !utf8.ValidString(s):
		return Invalid(field, "must be valid UTF-8")
	case strings.TrimSpace(s) != s:
		return Invalid(field, "must not start or end with white space")
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return Invalid(field, "must be printable text (no control or formatting characters)")
		}
	}
	return nil
}

// ValidateVideoType accepts one of VideoTypes, parameters allowed.
func ValidateVideoType(contentType string) error {
	mt, _, err := mime.ParseMediaType(contentType)
	if err == nil {
		for _, t := range VideoTypes {
			if mt == t {
				return nil
			}
		}
	}
	return &Error{Code: CodeNotVideo, Field: "contentType",
		Message: "must be a video type: " + strings.Join(VideoTypes, ", ")}
}

func formatBytes(n int64) string {
	s := strconv.FormatInt(n, 10) + " bytes"
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	for i := len(units) - 1; i >= 0; i-- {
		if size := int64(1) << (10 * (i + 1)); n >= size && n%size == 0 {
			return s + " (" + strconv.FormatInt(n/size, 10) + " " + units[i] + ")"
		}
	}
	return s
}

var awaiting = Clause{If: Cmp(FieldStatus, OpEq, StatusAwaitingUpload), Else: func(m Movie) error {
	return &Error{Code: CodeNotAwaitingUpload, Message: "This movie's file was already received; a new file needs a new movie."}
}}

// CompleteIngest makes an uploaded movie ready: its video as probed, the
// whole movie trimmed in, every frame captured.
//
// Precondition: the movie awaits its upload. A redelivered upload event
// finds it ready and is refused with CodeNotAwaitingUpload, a no-op.
type CompleteIngest struct {
	FrameCount int
	FrameRate  float64
	Video      Video
	Now        time.Time
}

func (c CompleteIngest) Validate() error {
	switch {
	case c.FrameCount < 1 || c.FrameCount > MaxFrameCount:
		return Invalid("frameCount", "must be 1-%d", MaxFrameCount)
	case !(c.FrameRate > 0 && c.FrameRate <= 1000):
		return Invalid("frameRate", "must be in (0, 1000]")
	case c.Video.Width < 1 || c.Video.Height < 1:
		return Invalid("video", "width and height must be positive")
	case !(c.Video.DurationSeconds >= 0):
		return Invalid("video", "duration must not be negative")
	case c.Video.ChunkFrames < 0 || c.Video.SourceWidth < 0 || c.Video.SourceHeight < 0 || c.Video.Rotation < 0 || c.Video.Rotation >= 360:
		return Invalid("video", "chunk size, source size and rotation must be in range")
	case c.Video.Rendition != "" && c.Video.Rendition != RenditionCopy && c.Video.Rendition != RenditionX264:
		return Invalid("video.rendition", "must be %q or %q", RenditionCopy, RenditionX264)
	}
	return validateText("video.codec", c.Video.Codec, 64)
}

func (c CompleteIngest) Precondition() []Clause { return []Clause{awaiting} }

func (c CompleteIngest) Update() []Assignment {
	return changed(c.Now,
		Set(FieldStatus, StatusReady), Set(FieldFrameCount, c.FrameCount), Set(FieldFrameRate, c.FrameRate),
		Set(FieldVideo, c.Video), Set(FieldTrimStart, 0), Set(FieldTrimEnd, c.FrameCount), Set(FieldCaptureInterval, 1),
		Set(FieldFramesWritten, 0), Set(FieldTotalFrames, 0))
}

// FailIngest records why an uploaded file cannot be analysed.
//
// Precondition: the movie awaits its upload. Summary is user-facing and is
// sanitized (SanitizeSummary).
type FailIngest struct {
	Summary string
	Now     time.Time
}

func (c FailIngest) Validate() error {
	if strings.TrimSpace(c.Summary) == "" {
		return Invalid("summary", "a failed ingest needs a summary")
	}
	return nil
}

func (c FailIngest) Precondition() []Clause { return []Clause{awaiting} }

func (c FailIngest) Update() []Assignment {
	return changed(c.Now, Set(FieldStatus, StatusIngestFailed), Set(FieldIngestFailure, SanitizeSummary(c.Summary)))
}

// ExpireUpload ends a movie whose upload never arrived. The sweeper's hook
// commits it on every listed movie on which its precondition holds
// (Decide): the precondition is the one statement of "an expired upload".
//
// Precondition: the movie awaits its upload, its ingest has not begun
// (an ingest that began can no longer expire, however long it takes: see
// PrepareFrames) and the upload's expiry has passed at Now.
type ExpireUpload struct{ Now time.Time }

func (c ExpireUpload) Validate() error { return nil }

func (c ExpireUpload) Precondition() []Clause {
	return []Clause{awaiting, ingestNotBegun, {If: UploadOverdue(c.Now), Else: func(Movie) error {
		return Invalid("expiresAt", "the upload has not expired yet")
	}}}
}

func (c ExpireUpload) Update() []Assignment {
	return changed(c.Now, Set(FieldStatus, StatusIngestFailed), Set(FieldIngestFailure, ExpiredUploadSummary))
}

// UploadOverdue holds when the stored upload's expiry has passed at now
// (now >= Upload.ExpiresAt); absent before a movie is created for upload.
func UploadOverdue(now time.Time) Cond { return Cmp(FieldUploadExpiresAt, OpLe, now) }

// Analysable holds when the movie has an ingested video (neither awaiting
// its upload nor failed to ingest). Opening Analyze requires it.
func Analysable() Clause {
	return Clause{
		If: Not{Or{Cmp(FieldStatus, OpEq, StatusAwaitingUpload), Cmp(FieldStatus, OpEq, StatusIngestFailed), Cmp(FieldStatus, OpEq, StatusDeleting)}},
		Else: func(m Movie) error {
			return &Error{Code: CodeMovieNotReady, Message: NoVideoMessage(m)}
		},
	}
}

// NoVideoMessage says, in words a user reads, why a movie has no video to
// show or analyse (it names no status value).
func NoVideoMessage(m Movie) string {
	switch m.Status {
	case StatusAwaitingUpload:
		return "This movie's video has not been uploaded yet."
	case StatusDeleting:
		return "This movie is being deleted."
	case StatusIngestFailed:
		return "This movie's video could not be read, so there is nothing to show. Upload the file again as a new movie."
	default:
		return "This movie has no video, so there is nothing to show."
	}
}

// PrepareFrames records a range of the ingest: frames [From, To) of the
// movie's Total are prepared (package media writes them before this
// commit). While a movie awaits its video, Progress counts the ingest's
// frames (FramesWritten prepared of TotalFrames); CompleteIngest clears it
// for the traces. The first range of an ingest commits From = To = 0, which
// records that the file arrived and its ingest began: from then on the
// upload can no longer expire (ExpireUpload), however long the ingest
// takes.
//
// Precondition: the movie awaits its video and exactly From frames are
// prepared, so each range is recorded once, in order: a redelivered or
// duplicated range finds more frames prepared and is refused
// (CodeAlreadyClaimed: another delivery recorded it) or, if it is this very
// range, answered as applied.
type PrepareFrames struct {
	From, To, Total int
	Now             time.Time
}

func (c PrepareFrames) Validate() error {
	if c.From < 0 || c.To < c.From || c.Total < c.To || c.Total < 1 || c.Total > MaxFrameCount {
		return Invalid("frames", "need 0 <= from <= to <= total, total 1-%d", MaxFrameCount)
	}
	return nil
}

func (c PrepareFrames) Precondition() []Clause {
	return []Clause{awaiting, {If: Cmp(FieldFramesWritten, OpEq, c.From), Else: func(m Movie) error {
		return &Error{Code: CodeAlreadyClaimed, Message: fmt.Sprintf("the ingest has prepared %d frames, not %d", m.Progress.FramesWritten, c.From)}
	}}}
}

func (c PrepareFrames) Update() []Assignment {
	return changed(c.Now, Set(FieldFramesWritten, c.To), Set(FieldTotalFrames, c.Total))
}

// AlreadyApplied holds where this range was recorded: the movie still
// awaits its video with To of Total frames prepared, and the range
// advanced (a range of no frames, the beginning, is simply repeated).
func (c PrepareFrames) AlreadyApplied() Cond {
	return And{awaiting.If, Cmp(FieldFramesWritten, OpEq, c.To), Cmp(FieldTotalFrames, OpEq, c.Total), Not{Cmp(FieldFramesWritten, OpEq, c.From)}}
}

// IngestBegun holds when the ingest of the movie's file has begun
// (PrepareFrames recorded its first range).
func IngestBegun(m Movie) bool { return Holds(And{awaiting.If, Not{ingestNotBegun.If}}, &m) }

// ingestNotBegun: no range of the ingest is recorded (a first range sets
// Progress.TotalFrames to the movie's frame count, which is at least 1).
// Stated as "not more than 0" so that an absent attribute reads as not
// begun in the store as in the domain.
var ingestNotBegun = Clause{If: Not{Cmp(FieldTotalFrames, OpGt, 0)}, Else: func(Movie) error {
	return &Error{Code: CodeNotAwaitingUpload, Message: "This movie's file arrived and its frames are being prepared."}
}}

// Package ingest turns an uploaded movie file into a ready movie: S3 tells
// the upload queue that an object arrived under uploads/, the ingest
// Lambda gets those messages as a real events.SQSEvent whose bodies are S3
// event notifications (events.S3Event), probes the file with ffprobe
// (video.Probe, over a presigned GET) and plans its rendition in its first
// range, recording that decision beside the chunks (media.Decision: later
// ranges read it, not the whole upload), and prepares its rendition
// (package media: keyframe-led H.264 chunks, the frames every reader
// reads) in ranges: each invocation works until its budget (Options.Budget) is
// spent, records the range on the movie's row (domain.PrepareFrames) and
// sends itself a continuation through the same queue. The last range
// commits the movie ready (domain.CompleteIngest) with what was decided
// (frame count, chunk size, frame size); a file that is not a usable video
// is recorded ingest_failed with a safe summary (domain.FailIngest). Every
// write requires the movie to await its video, so a redelivered event is a
// no-op; a movie deleted meanwhile has its files removed.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/video"
)

// Movies is what the ingest needs of the movie store.
type Movies interface {
	Get(ctx context.Context, id string) (domain.Movie, error)
	Commit(ctx context.Context, movieID string, cmd domain.Command) (domain.Movie, error)
}

// Files is what the ingest needs of the movies bucket (s3store.Store).
type Files interface {
	UploadURL(ctx context.Context, movieID string, expires time.Duration) (string, error)
	Put(ctx context.Context, key, contentType string, body []byte) error
	PresignGet(ctx context.Context, key string, expires time.Duration) (string, error)
	Get(ctx context.Context, key string) ([]byte, error)
	DeleteFiles(ctx context.Context, movieID string) error
	ClearPending(ctx context.Context, movieID string) error
	Head(ctx context.Context, key string) (s3store.Object, error)
}

// SizeMismatchError: the file that arrived is not the size the upload
// declared (a truncated or wrong file).
type SizeMismatchError struct {
	Declared, Arrived int64
}

func (e *SizeMismatchError) Error() string {
	return fmt.Sprintf("ingest: the upload declared %d bytes, %d arrived", e.Declared, e.Arrived)
}

var _ Files = (*s3store.Store)(nil)

// Options configure a Handler.
type Options struct {
	Movies Movies
	Files  Files
	Log    *slog.Logger
	// Now is the clock of the commands (time.Now when nil).
	Now func() time.Time
	// Budget is how long one invocation prepares frames before it records
	// its range and continues in another (DefaultBudget when 0).
	Budget time.Duration
	// Continue sends the movie's next range to the upload queue (body:
	// ContinuationBody). Nil: the ranges run one after another in this
	// invocation (tests).
	Continue func(ctx context.Context, movieID string) error
	// ChunkFrames is the rendition's chunk size (media.DefaultChunkFrames
	// when 0).
	ChunkFrames int
	// RangeChunks (0: no limit) ends a range after this many chunks, as the
	// budget would: tests make ranges of a known size with it.
	RangeChunks int
}

// DefaultBudget is an invocation's default preparing time: well inside
// Lambda's 15 minutes, leaving time to store the last chunk and commit.
const DefaultBudget = 10 * time.Minute

// EnvBudget names the budget's environment variable.
const EnvBudget = envvar.IngestInvocationSeconds

// BudgetFromEnv reads EnvBudget: 1-900 whole seconds, DefaultBudget when
// unset.
func BudgetFromEnv(getenv func(string) string) (time.Duration, error) {
	v := getenv(EnvBudget)
	if v == "" {
		return DefaultBudget, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 900 {
		return 0, fmt.Errorf("%s=%q must be 1-900 seconds", EnvBudget, v)
	}
	return time.Duration(n) * time.Second, nil
}

// Handler is the ingest.
type Handler struct {
	opts Options
}

// New returns the handler.
func New(opts Options) (*Handler, error) {
	switch {
	case opts.Movies == nil:
		return nil, errors.New("ingest: no movie store")
	case opts.Files == nil:
		return nil, errors.New("ingest: no movie files")
	case opts.Log == nil:
		return nil, errors.New("ingest: no logger")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget
	}
	if opts.ChunkFrames <= 0 {
		opts.ChunkFrames = media.DefaultChunkFrames
	}
	return &Handler{opts: opts}, nil
}

// Handle processes one batch. A message whose ingest failed for a reason
// that may pass (storage, DynamoDB, the context) is reported in
// BatchItemFailures for redelivery; everything else (an ingested movie, a
// file that is not a usable video, a deleted movie, an undecodable body)
// succeeds.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, msg := range ev.Records {
		if err := h.message(ctx, msg.Body); err != nil {
			h.opts.Log.Error("ingest failed; the message is left for redelivery",
				slog.String("messageId", msg.MessageId), slog.String("error", err.Error()))
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: msg.MessageId})
		}
	}
	return resp, nil
}

func (h *Handler) message(ctx context.Context, body string) error {
	ids, err := ParseNotification(body)
	if err != nil {
		// Never decodable: redelivery cannot help.
		h.opts.Log.Warn("ingest: skipping a message that is not an S3 event", slog.String("error", err.Error()))
		return nil
	}
	for _, id := range ids {
		if err := h.Ingest(ctx, id); err != nil {
			return fmt.Errorf("movie %s: %w", id, err)
		}
	}
	return nil
}

// Ingest processes the uploaded file of one movie: one range of its
// preparation, from where the row says the last range ended. It returns an
// error only when trying again may succeed.
func (h *Handler) Ingest(ctx context.Context, movieID string) error {
	began := time.Now()
	log := h.opts.Log.With(slog.String("movieId", movieID))
	m, err := h.opts.Movies.Get(ctx, movieID)
	switch {
	case domain.ErrorCode(err) == domain.CodeNotFound:
		log.Info("ingest: the movie was deleted; removing its files")
		return h.opts.Files.DeleteFiles(ctx, movieID)
	case err != nil:
		return err
	case m.Status == domain.StatusIngestFailed:
		log.Info("ingest: already failed (a redelivered or repeated event)")
		return nil
	case m.Status == domain.StatusDeleting:
		// Deleted while its ingest ran: write nothing more; the sweeper's
		// purge removes every object under the movie's prefixes.
		log.Info("ingest: the movie is being deleted; its next range is dropped")
		return nil
	case m.Status != domain.StatusAwaitingUpload:
		// Ready: a redelivered event, or the delivery that completed it died
		// before it untagged the file. Untagging again is harmless.
		return h.clearPending(ctx, movieID)
	}
	if m.Progress.TotalFrames == 0 && m.Upload != nil && m.Upload.SizeBytes > 0 {
		// Before the ingest begins: the file must be the one declared.
		obj, err := h.opts.Files.Head(ctx, s3store.UploadKey(movieID))
		if errors.Is(err, s3store.ErrNotFound) {
			log.Info("ingest: the upload is not there (removed, or not yet visible); nothing to do")
			return nil
		}
		if err != nil {
			return err
		}
		if obj.Size != m.Upload.SizeBytes {
			return h.fail(ctx, log, movieID, &SizeMismatchError{Declared: m.Upload.SizeBytes, Arrived: obj.Size})
		}
	}
	src, err := h.opts.Files.UploadURL(ctx, movieID, time.Hour)
	if err != nil {
		return err
	}
	d, err := h.decision(ctx, log, movieID, src)
	if err != nil {
		return h.fail(ctx, log, movieID, err)
	}
	info, plan := d.Info, d.Plan
	from := m.Progress.FramesWritten
	total := max(info.FrameCount, m.Progress.TotalFrames)
	// Every frame at one size, from the probe (a stream may change its
	// size midway).
	width, height := media.RenditionSize(info)
	if m.Progress.TotalFrames == 0 {
		// The file arrived: record that its ingest began (the upload can no
		// longer expire).
		m, err = h.opts.Movies.Commit(ctx, movieID, domain.PrepareFrames{From: 0, To: 0, Total: total, Now: h.opts.Now()})
		if done, err := h.settled(ctx, log, movieID, err); done {
			return err
		}
	}
	for {
		res, err := media.PrepareRange(ctx, src, plan, media.PrepareOptions{
			FromFrame: from, ExpectedFrames: total, FrameRate: info.FrameRate,
			Width: width, Height: height, Rotation: info.Rotation,
			Timing: d.Timing, Deadline: time.Now().Add(h.opts.Budget), HardDeadline: h.hardDeadline(ctx),
			MaxChunks: h.opts.RangeChunks,
		}, func(ctx context.Context, c media.Chunk) error {
			body, err := os.ReadFile(c.Path)
			if err != nil {
				return err
			}
			return h.opts.Files.Put(ctx, media.ChunkKey(movieID, c.Index), media.ChunkType, body)
		})
		if err != nil {
			return h.fail(ctx, log, movieID, err)
		}
		if res.Done {
			return h.complete(ctx, log, movieID, info, plan, res, began)
		}
		total = max(total, res.NextFrame+1)
		_, err = h.opts.Movies.Commit(ctx, movieID, domain.PrepareFrames{From: from, To: res.NextFrame, Total: total, Now: h.opts.Now()})
		if domain.ErrorCode(err) == domain.CodeAlreadyClaimed {
			log.Info("ingest: another delivery recorded this range first; it continues")
			return nil
		}
		if done, err := h.settled(ctx, log, movieID, err); done {
			return err
		}
		log.Info("ingest: range prepared", slog.Int("from", from), slog.Int("to", res.NextFrame), slog.Int("of", total),
			slog.Int("chunks", res.Stored), slog.Int("remuxed", res.Copied),
			slog.Duration("took", time.Since(began)))
		if h.opts.Continue != nil {
			return h.opts.Continue(ctx, movieID)
		}
		from = res.NextFrame
	}
}

// Reading the upload to decide (variables: a test counts the reads).
var (
	probeUpload   = video.ProbeWithTiming
	planRendition = media.PlanRendition
)

// hardDeadline is when a range that has not finished its first chunk
// gives up (media.ErrNoProgress): a minute (at most a tenth of the time
// left) before the invocation's own deadline, or without one (the local
// stack) one budget, at least a minute, past the budget.
func (h *Handler) hardDeadline(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d.Add(-min(time.Minute, time.Until(d)/10))
	}
	return time.Now().Add(h.opts.Budget + max(h.opts.Budget, time.Minute))
}

// complete commits the movie ready with what the ingest decided, then
// untags its file.
func (h *Handler) complete(ctx context.Context, log *slog.Logger, movieID string, info video.Info, plan media.Plan, res media.Prepared, began time.Time) error {
	w, ht := res.Width, res.Height
	if w == 0 {
		// This range stored no chunk (the previous one ended at the movie's
		// end): read the size from the last chunk.
		url, err := h.opts.Files.PresignGet(ctx, media.ChunkKey(movieID, (res.NextFrame-1)/plan.ChunkFrames), time.Hour)
		if err != nil {
			return err
		}
		last, err := video.Probe(ctx, url)
		if err != nil {
			return err
		}
		w, ht = last.Width, last.Height
	}
	// The pending tag goes before the movie is ready (issue 20 item 2);
	// untagging is idempotent, and a redelivery untags again.
	if err := h.clearPending(ctx, movieID); err != nil {
		return err
	}
	_, err := h.opts.Movies.Commit(ctx, movieID, domain.CompleteIngest{
		FrameCount: res.NextFrame, FrameRate: info.FrameRate, Now: h.opts.Now(),
		Video: domain.Video{Width: w, Height: ht, Codec: info.Codec, DurationSeconds: info.Duration.Seconds(),
			ChunkFrames: plan.ChunkFrames, SourceWidth: info.Width, SourceHeight: info.Height, Rotation: info.Rotation,
			Rendition: plan.Rendition()},
	})
	if done, err := h.settled(ctx, log, movieID, err); done {
		return err
	}
	log.Info("ingest: ready", slog.Int("frames", res.NextFrame), slog.Float64("frameRate", info.FrameRate),
		slog.Int("width", w), slog.Int("height", ht), slog.String("codec", info.Codec), slog.String("rendition", plan.Rendition()),
		slog.Duration("took", time.Since(began)))
	return h.clearPending(ctx, movieID)
}

// clearPending untags a ready movie's file; an error leaves the message for
// redelivery, which finds the movie ready and untags again.
func (h *Handler) clearPending(ctx context.Context, movieID string) error {
	if err := h.opts.Files.ClearPending(ctx, movieID); err != nil {
		return fmt.Errorf("clear the pending tag: %w", err)
	}
	return nil
}

// settled handles a commit's refusals: the movie was processed by another
// delivery (no-op) or deleted (its files removed). done is false only when
// the commit succeeded.
func (h *Handler) settled(ctx context.Context, log *slog.Logger, movieID string, err error) (done bool, _ error) {
	switch domain.ErrorCode(err) {
	case "":
		return err != nil, err
	case domain.CodeNotAwaitingUpload:
		log.Info("ingest: another delivery processed the movie first")
		return true, nil
	case domain.CodeNotFound:
		log.Info("ingest: the movie was deleted while it was ingested; removing its files")
		return true, h.opts.Files.DeleteFiles(ctx, movieID)
	}
	return true, err
}

// fail records a file the ingest cannot use; other errors (storage, the
// context) are returned for redelivery.
func (h *Handler) fail(ctx context.Context, log *slog.Logger, movieID string, cause error) error {
	summary, permanent := Summary(cause)
	if !permanent {
		return cause
	}
	log.Warn("ingest: the file cannot be analysed", slog.String("summary", summary), slog.String("error", cause.Error()))
	_, err := h.opts.Movies.Commit(ctx, movieID, domain.FailIngest{Summary: summary, Now: h.opts.Now()})
	_, err = h.settled(ctx, log, movieID, err)
	return err
}

// Summary is the user-facing summary of an ingest error and whether the
// error is a property of the file (permanent) rather than of the moment.
func Summary(err error) (string, bool) {
	var codec *video.UnsupportedCodecError
	var size *SizeMismatchError
	var large *video.TooLargeError
	var rate *video.FrameRateError
	switch {
	case errors.As(err, &size):
		return fmt.Sprintf("The file that arrived has %d bytes, but the upload declared %d: upload the complete file again.",
			size.Arrived, size.Declared), true
	case errors.As(err, &codec):
		return "The video codec " + domain.SanitizeSummary(codec.Codec) + " cannot be decoded.", true
	case errors.Is(err, video.ErrUnsupportedCodec):
		return "The video's codec cannot be decoded.", true
	case errors.Is(err, video.ErrEmpty):
		return "The file is empty: upload the complete file again.", true
	case errors.Is(err, video.ErrStillImage):
		return "The file is a still image, not a video.", true
	case errors.Is(err, video.ErrNoVideoStream):
		return "The file has no video stream (it may hold only sound).", true
	case errors.Is(err, video.ErrNotVideo):
		return "The file is not a video file.", true
	case errors.As(err, &large):
		return fmt.Sprintf("The video's frames are %dx%d pixels: at most %d pixels a side can be prepared.",
			large.Width, large.Height, video.MaxDimension), true
	case errors.As(err, &rate):
		return fmt.Sprintf("The video declares %s frames per second: from %s (one frame every 1,000 seconds) to %d can be prepared.",
			strconv.FormatFloat(rate.Rate, 'g', 4, 64), strconv.FormatFloat(video.MinFrameRate, 'g', -1, 64), video.MaxFrameRate), true
	case errors.Is(err, video.ErrTooManyFrames):
		return fmt.Sprintf("The video has more than %d million frames, more than can be prepared.", video.MaxFrames/1_000_000), true
	case errors.Is(err, video.ErrTruncated):
		return "The video file is truncated: upload the complete file again.", true
	case errors.Is(err, video.ErrNoFrames):
		return "The video has no frames.", true
	case errors.Is(err, media.ErrNoProgress):
		return "The video could not be prepared: not one chunk of its frames was ready within an invocation's time limit.", true
	case errors.Is(err, video.ErrTooLarge):
		return "The video's frames are too large (at most 8192 pixels a side).", true
	}
	return "", false
}

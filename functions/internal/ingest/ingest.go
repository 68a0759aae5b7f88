// Package ingest turns an uploaded movie file into a ready movie: S3 tells
// the upload queue that an object arrived under uploads/, the ingest
// Lambda gets those messages as a real events.SQSEvent whose bodies are S3
// event notifications (events.S3Event), probes the file with ffprobe
// (video.Probe, over a presigned GET), writes one grayscale PNG per frame
// decoded by video.ReadFrames (the tracer's own reader, so frame N on the
// page is exactly the frame N the tracer reads), and commits the movie's
// state with one conditional write: ready (domain.CompleteIngest) or
// ingest_failed with a safe summary (domain.FailIngest). Both require the
// movie to await its upload, so a redelivered event is a no-op; a movie
// deleted meanwhile has its files removed.
package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
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
	DeleteFiles(ctx context.Context, movieID string) error
	ClearPending(ctx context.Context, movieID string) error
}

var _ Files = (*s3store.Store)(nil)

// Options configure a Handler.
type Options struct {
	Movies Movies
	Files  Files
	Log    *slog.Logger
	// Now is the clock of the commands (time.Now when nil).
	Now func() time.Time
	// Writers encode and upload frame images in parallel (default 4).
	Writers int
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
	if opts.Writers <= 0 {
		opts.Writers = 4
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

// ParseNotification decodes one SQS body as an S3 event notification and
// returns the movie IDs of its object-created records under uploads/. A
// test event (sent when the notification is configured) has none.
func ParseNotification(body string) ([]string, error) {
	var s3ev events.S3Event
	if err := json.Unmarshal([]byte(body), &s3ev); err != nil {
		return nil, fmt.Errorf("not an S3 event notification: %w", err)
	}
	var ids []string
	for _, r := range s3ev.Records {
		if r.EventSource != "aws:s3" || !strings.HasPrefix(r.EventName, "ObjectCreated:") {
			continue
		}
		key, err := url.QueryUnescape(r.S3.Object.Key) // S3 form-encodes keys in events
		if err != nil {
			continue
		}
		if id := s3store.MovieIDOfUpload(key); domain.ValidMovieID(id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
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

// Ingest processes the uploaded file of one movie. It returns an error only
// when trying again may succeed.
func (h *Handler) Ingest(ctx context.Context, movieID string) error {
	log := h.opts.Log.With(slog.String("movieId", movieID))
	m, err := h.opts.Movies.Get(ctx, movieID)
	switch {
	case domain.ErrorCode(err) == domain.CodeNotFound:
		log.Info("ingest: the movie was deleted; removing its files")
		return h.opts.Files.DeleteFiles(ctx, movieID)
	case err != nil:
		return err
	case m.Status != domain.StatusAwaitingUpload:
		log.Info("ingest: already processed (a redelivered or repeated event)", slog.String("status", string(m.Status)))
		return nil
	}
	began := time.Now()
	src, err := h.opts.Files.UploadURL(ctx, movieID, time.Hour)
	if err != nil {
		return err
	}
	info, err := video.Probe(ctx, src)
	if err != nil {
		return h.fail(ctx, log, movieID, err)
	}
	frames, err := h.writeFrames(ctx, movieID, src, info)
	if err != nil {
		return h.fail(ctx, log, movieID, err)
	}
	// The pending tag goes before the movie is ready (issue 20 item 2): a
	// ready movie must never keep a source the bucket's lifecycle deletes.
	// If this process dies after the untag, the redelivered event finds the
	// movie still awaiting its upload and ingests it again; if the movie
	// never becomes ready, its source is deleted with it (DELETE, or the
	// sweeper's upload expiry). Untagging is idempotent.
	if err := h.opts.Files.ClearPending(ctx, movieID); err != nil {
		return fmt.Errorf("ingest: clear the pending tag: %w", err) // redelivered
	}
	_, err = h.opts.Movies.Commit(ctx, movieID, domain.CompleteIngest{
		FrameCount: frames, FrameRate: info.FrameRate, Now: h.opts.Now(),
		Video: domain.Video{Width: info.Width, Height: info.Height, Codec: info.Codec, DurationSeconds: info.Duration.Seconds()},
	})
	if done, err := h.settled(ctx, log, movieID, err); done {
		return err
	}
	log.Info("ingest: ready", slog.Int("frames", frames), slog.Float64("frameRate", info.FrameRate),
		slog.Int("width", info.Width), slog.Int("height", info.Height), slog.String("codec", info.Codec),
		slog.Duration("took", time.Since(began)))
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
	switch {
	case errors.As(err, &codec):
		return "The video codec " + domain.SanitizeSummary(codec.Codec) + " is not supported. Convert the movie to H.264 (MP4) and upload it again.", true
	case errors.Is(err, video.ErrNotVideo):
		return "The file is not a video file.", true
	case errors.Is(err, video.ErrTruncated):
		return "The video file is truncated: upload the complete file again.", true
	case errors.Is(err, video.ErrNoFrames):
		return "The video has no frames.", true
	case errors.Is(err, video.ErrTooLarge):
		return "The video's frames are too large (at most 8192 pixels a side).", true
	}
	return "", false
}

// writeFrames decodes every frame with video.ReadFrames and stores each as
// a grayscale PNG (frames/<id>/<n>.png), encoding and uploading on
// opts.Writers goroutines; memory is bounded by a few frames. It returns
// the number of frames decoded, which is the movie's frame count.
func (h *Handler) writeFrames(ctx context.Context, movieID, src string, info video.Info) (int, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	type job struct {
		n    int
		w, h int
		gray []byte
	}
	jobs := make(chan job, h.opts.Writers)
	// Frame buffers are recycled through free (ReadFrames reuses its own).
	free := make(chan []byte, h.opts.Writers+2)
	var wg sync.WaitGroup
	for range h.opts.Writers {
		wg.Go(func() {
			var out bytes.Buffer
			enc := png.Encoder{CompressionLevel: png.BestSpeed}
			for j := range jobs {
				out.Reset()
				img := &image.Gray{Pix: j.gray, Stride: j.w, Rect: image.Rect(0, 0, j.w, j.h)}
				err := enc.Encode(&out, img)
				select {
				case free <- j.gray:
				default:
				}
				if err == nil {
					err = h.opts.Files.Put(ctx, s3store.FrameKey(movieID, j.n), s3store.FrameImageType, out.Bytes())
				}
				if err != nil {
					cancel(err)
				}
			}
		})
	}
	count := 0
	readErr := video.ReadFrames(ctx, src, video.ReadOptions{}, func(f video.Frame) error {
		var buf []byte
		select {
		case buf = <-free:
		default:
		}
		if cap(buf) < len(f.Gray) {
			buf = make([]byte, len(f.Gray))
		}
		buf = buf[:len(f.Gray)]
		copy(buf, f.Gray)
		select {
		case jobs <- job{n: f.Index, w: f.Width, h: f.Height, gray: buf}:
			count = f.Index + 1
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	close(jobs)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return 0, err // a frame write failed
	}
	if readErr != nil {
		return 0, readErr
	}
	if count == 0 {
		return 0, video.ErrNoFrames
	}
	return count, nil
}

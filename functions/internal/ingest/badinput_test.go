package ingest_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/ingest"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/video"
)

// A file whose size is not the declared one (a truncated or wrong upload)
// fails with a sentence naming both sizes, before any frame is prepared.
func TestIngestRefusesAFileOfAnotherSize(t *testing.T) {
	e := newEnv(t)
	_, data := movingSquare(t, 12, 10)
	now := time.Now()
	c := domain.CreateMovie{ID: "size1", Title: "size", MaxBytes: 1 << 30, Now: now,
		Upload: domain.Upload{FileName: "a.mp4", ContentType: "video/mp4", SizeBytes: int64(len(data)) + 1000, ExpiresAt: now.Add(time.Hour)}}
	if err := e.movies.Create(t.Context(), c.Movie()); err != nil {
		t.Fatal(err)
	}
	if status := e.put("size1", data); status != http.StatusOK {
		t.Fatalf("PUT %d", status)
	}
	if resp := e.handle(e.receive()); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("a wrong size is not worth a retry: %+v", resp)
	}
	m := e.get("size1")
	if m.Status != domain.StatusIngestFailed || !strings.Contains(m.IngestFailure, "but the upload declared") || m.Progress.TotalFrames != 0 {
		t.Fatalf("%s %q %+v", m.Status, m.IngestFailure, m.Progress)
	}
	if _, err := e.files.Head(t.Context(), media.ChunkKey("size1", 0)); !errors.Is(err, s3store.ErrNotFound) {
		t.Fatalf("a chunk was written: %v", err)
	}
	t.Log(m.IngestFailure)
}

// rangedEnv is env with an ingest that prepares ranges of two chunks of 10
// frames and records its continuations instead of sending them.
func rangedEnv(t *testing.T) (*env, *[]string) {
	e := newEnv(t)
	var sent []string
	h, err := ingest.New(ingest.Options{Movies: e.movies, Files: e.files, Log: logging.New(e.logs, slog.LevelDebug),
		ChunkFrames: 10, RangeChunks: 2, Continue: func(_ context.Context, id string) error {
			sent = append(sent, id)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	e.ingest = h
	return e, &sent
}

// cameraGOP makes movingSquare's keyframes every 10 frames with closed
// GOPs and B-frames (the ingest remuxes it in chunks of 10);
// irregularGOP makes them at frames 0 and 7 only (the ingest encodes it in
// chunks of 10).
var (
	cameraGOP    = []string{"-bf", "3", "-g", "10", "-keyint_min", "10", "-sc_threshold", "0"}
	irregularGOP = []string{"-bf", "3", "-g", "200", "-sc_threshold", "0", "-force_key_frames", "expr:eq(n,7)"}
)

func continuation(id string) events.SQSEvent {
	return events.SQSEvent{Records: []events.SQSMessage{{MessageId: "c-" + id, Body: ingest.ContinuationBody(id)}}}
}

// chunksOf counts the chunks stored for a movie (keys 0..limit).
func chunksOf(t *testing.T, e *env, id string, limit int) int {
	t.Helper()
	n := 0
	for k := range limit {
		if _, err := e.files.Head(t.Context(), media.ChunkKey(id, k)); err == nil {
			n++
		} else if !errors.Is(err, s3store.ErrNotFound) {
			t.Fatal(err)
		}
	}
	return n
}

// A movie deleted between two ranges of its ingest: the next range writes
// nothing; with its row gone, every object of the movie (each chunk, the
// upload) is removed; while it is being deleted (the purge's state),
// nothing more is written and the sweeper's purge removes the rest.
func TestIngestOfAMovieDeletedBetweenRanges(t *testing.T) {
	e, sent := rangedEnv(t)
	_, data := movingSquare(t, 95, 10, cameraGOP...)
	e.upload("del1", data)
	e.upload("del2", data)
	if resp := e.handle(e.receive()); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v", resp)
	}
	if len(*sent) != 2 {
		t.Fatalf("continuations %v after the first ranges", *sent)
	}
	for _, id := range []string{"del1", "del2"} {
		if m := e.get(id); m.Status != domain.StatusAwaitingUpload || m.Progress.FramesWritten < 10 || chunksOf(t, e, id, 12) == 0 {
			t.Fatalf("%s after its first range: %s %+v", id, m.Status, m.Progress)
		}
	}
	// del1's row is gone; del2 is being deleted.
	if _, err := e.movies.Delete(t.Context(), "del1", domain.DeleteMovie{Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.movies.Commit(t.Context(), "del2", domain.DeleteMovie{Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	before := chunksOf(t, e, "del2", 12)
	for _, id := range []string{"del1", "del2"} {
		if resp := e.handle(continuation(id)); len(resp.BatchItemFailures) != 0 {
			t.Fatalf("%s: %+v", id, resp)
		}
	}
	if n := chunksOf(t, e, "del1", 12); n != 0 {
		t.Fatalf("%d chunks of the deleted movie left", n)
	}
	if _, err := e.files.Head(t.Context(), s3store.UploadKey("del1")); !errors.Is(err, s3store.ErrNotFound) {
		t.Fatalf("the deleted movie's upload is still there: %v", err)
	}
	if n := chunksOf(t, e, "del2", 12); n != before || e.get("del2").Status != domain.StatusDeleting {
		t.Fatalf("the deleting movie has %d chunks (had %d), status %s", n, before, e.get("del2").Status)
	}
	if len(*sent) != 2 {
		t.Fatalf("continued a deleted movie: %v", *sent)
	}
}

// Every range delivered twice (a redelivered or duplicated continuation,
// and the notification redelivered at the end): the movie becomes ready
// once, with every frame, and each duplicate writes no range twice; for a
// remuxed upload and an encoded one.
func TestIngestWithEveryRangeDeliveredTwice(t *testing.T) {
	for _, c := range []struct {
		rendition string
		x264      []string
	}{{domain.RenditionCopy, cameraGOP}, {domain.RenditionX264, irregularGOP}} {
		t.Run(c.rendition, func(t *testing.T) { deliveredTwice(t, c.rendition, c.x264) })
	}
}

func deliveredTwice(t *testing.T, rendition string, x264 []string) {
	e, sent := rangedEnv(t)
	_, data := movingSquare(t, 95, 10, x264...)
	e.upload("dup1", data)
	notification := e.receive()
	if resp := e.handle(notification); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v", resp)
	}
	for i := 0; e.get("dup1").Status == domain.StatusAwaitingUpload; i++ {
		if i > 40 {
			t.Fatalf("not ready after %d ranges: %+v", i, e.get("dup1").Progress)
		}
		for range 2 {
			if resp := e.handle(continuation("dup1")); len(resp.BatchItemFailures) != 0 {
				t.Fatalf("%+v", resp)
			}
		}
	}
	if resp := e.handle(notification); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("the redelivered notification: %+v", resp)
	}
	m := e.get("dup1")
	if m.Status != domain.StatusReady || m.FrameCount != 95 || chunksOf(t, e, "dup1", 12) != 10 ||
		m.Video.ChunkFrames != 10 || m.Video.Rendition != rendition {
		t.Fatalf("%s, %d frames, %d chunks, video %+v", m.Status, m.FrameCount, chunksOf(t, e, "dup1", 12), m.Video)
	}
	if len(*sent) < 2 {
		t.Fatalf("%d continuations: the ranges did not continue", len(*sent))
	}
	// Frame k is frame k after the duplicates.
	p, err := media.NewProvider(media.ProviderOptions{Objects: e.files})
	if err != nil {
		t.Fatal(err)
	}
	checkSquare(t, p, m)
}

// checkSquare reads every frame of m through the provider (what the tracer
// reads) and finds movingSquare's square where frame k puts it (its left
// edge at 2k mod 80 on row 28): no frame shifted, lost or repeated.
func checkSquare(t *testing.T, p *media.Provider, m domain.Movie) {
	t.Helper()
	next := 0
	err := p.ReadFrames(t.Context(), m, video.ReadOptions{}, func(f video.Frame) error {
		if f.Index != next {
			t.Fatalf("frame %d read where %d was expected", f.Index, next)
		}
		next++
		left := -1
		for x := range 96 {
			if f.Gray[28*96+x] > 200 {
				left = x
				break
			}
		}
		if want := 2 * f.Index % 80; left < want-1 || left > want+1 {
			t.Fatalf("frame %d shows the square at x=%d, want %d", f.Index, left, want)
		}
		return nil
	})
	if err != nil || next != m.FrameCount {
		t.Fatalf("read %d of %d frames: %v", next, m.FrameCount, err)
	}
}

package ingest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/ingest"
	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
)

// Only a movie's first range reads the upload to decide its rendition (the
// probe and the plan, one read of the whole upload); the later ranges
// read the recorded decision. A range that finds the record gone (lost, or
// an ingest begun before it existed) decides again, the same; frame k is
// still frame k; the movie's deletion removes the record. For a remuxed
// upload and an encoded one.
func TestLaterRangesReuseTheDecision(t *testing.T) {
	for _, c := range []struct {
		rendition string
		x264      []string
	}{{domain.RenditionCopy, cameraGOP}, {domain.RenditionX264, irregularGOP}} {
		t.Run(c.rendition, func(t *testing.T) {
			e, _ := rangedEnv(t)
			reads := ingest.CountUploadReads(t)
			_, data := movingSquare(t, 95, 10, c.x264...)
			e.upload("dec1", data)
			want := func(n int64, when string) {
				t.Helper()
				if d := reads.Decisions.Load(); d != n {
					t.Fatalf("%s: the upload was read to decide %d times, want %d", when, d, n)
				}
			}
			if resp := e.handle(e.receive()); len(resp.BatchItemFailures) != 0 {
				t.Fatalf("%+v", resp)
			}
			want(1, "the first range")
			key := media.DecisionKey("dec1")
			if _, err := e.files.Head(t.Context(), key); err != nil {
				t.Fatalf("no decision recorded: %v", err)
			}
			if resp := e.handle(continuation("dec1")); len(resp.BatchItemFailures) != 0 {
				t.Fatalf("%+v", resp)
			}
			want(1, "the second range")
			if err := e.files.Delete(t.Context(), key); err != nil {
				t.Fatal(err)
			}
			for i := 0; e.get("dec1").Status == domain.StatusAwaitingUpload; i++ {
				if i > 20 {
					t.Fatalf("not ready after %d ranges: %+v", i, e.get("dec1").Progress)
				}
				if resp := e.handle(continuation("dec1")); len(resp.BatchItemFailures) != 0 {
					t.Fatalf("%+v", resp)
				}
			}
			want(2, "the ranges after the record was removed")
			m := e.get("dec1")
			if m.Status != domain.StatusReady || m.FrameCount != 95 || m.Video.Rendition != c.rendition || m.Video.ChunkFrames != 10 {
				t.Fatalf("%s, %d frames, video %+v", m.Status, m.FrameCount, m.Video)
			}
			p, err := media.NewProvider(media.ProviderOptions{Objects: e.files})
			if err != nil {
				t.Fatal(err)
			}
			checkSquare(t, p, m)
			// Deleted: every object goes, the record too.
			if _, err := e.movies.Delete(t.Context(), "dec1", domain.DeleteMovie{Now: time.Now()}); err != nil {
				t.Fatal(err)
			}
			if resp := e.handle(continuation("dec1")); len(resp.BatchItemFailures) != 0 {
				t.Fatalf("%+v", resp)
			}
			if _, err := e.files.Head(t.Context(), key); !errors.Is(err, s3store.ErrNotFound) {
				t.Fatalf("the deleted movie's decision is still there: %v", err)
			}
		})
	}
}

package tracer_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/video"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// chunks is an in-memory movies bucket holding one movie's rendition.
type chunks struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (c *chunks) Get(_ context.Context, key string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[key]
	if !ok {
		return nil, fmt.Errorf("no object %s", key)
	}
	return b, nil
}

func (c *chunks) PresignGet(context.Context, string, time.Duration) (string, error) {
	return "", fmt.Errorf("not presigned in this test")
}

// renditionOf prepares path's rendition (the ingest's media.Prepare, in
// chunks of chunkFrames) and returns the movie row the ingest would leave.
func renditionOf(t *testing.T, path string, m domain.Movie, chunkFrames int) (*chunks, domain.Movie) {
	t.Helper()
	ctx := context.Background()
	info, err := video.Probe(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	objs := &chunks{m: map[string][]byte{}}
	res, err := media.Prepare(ctx, path, media.PrepareOptions{ChunkFrames: chunkFrames, ExpectedFrames: info.FrameCount, FrameRate: info.FrameRate},
		func(_ context.Context, c media.Chunk) error {
			b, err := os.ReadFile(c.Path)
			objs.mu.Lock()
			objs.m[media.ChunkKey(m.ID, c.Index)] = b
			objs.mu.Unlock()
			return err
		})
	if err != nil || !res.Done || res.NextFrame != info.FrameCount {
		t.Fatalf("prepare: %+v %v", res, err)
	}
	m.FrameCount = res.NextFrame
	m.Video = &domain.Video{Width: res.Width, Height: res.Height, Codec: info.Codec, ChunkFrames: chunkFrames,
		SourceWidth: info.Width, SourceHeight: info.Height}
	return objs, m
}

// spyFrames records the gray frames the tracer read.
type spyFrames struct {
	inner tracer.Frames
	mu    sync.Mutex
	seen  map[int][]byte
}

func (s *spyFrames) ReadFrames(ctx context.Context, m domain.Movie, o video.ReadOptions, fn func(video.Frame) error) error {
	return s.inner.ReadFrames(ctx, m, o, func(f video.Frame) error {
		s.mu.Lock()
		s.seen[f.Index] = append([]byte(nil), f.Gray...)
		s.mu.Unlock()
		return fn(f)
	})
}

// The tracer reads an ingested movie from its rendition through the one
// frame provider, never from the file: every frame it read is, within the
// stated 40 dB luma bound, the frame image the API serves for the same
// index (Provider.Image), across chunk boundaries and from a later start;
// and it still follows the ground truth.
func TestVideoTracerReadsTheRendition(t *testing.T) {
	path, s := groundTruthClip(t, "clean", 45)
	objs, m := renditionOf(t, path, clipMovie(t, s, 3, 2), 10)
	provider, err := media.NewProvider(media.ProviderOptions{Objects: objs})
	if err != nil {
		t.Fatal(err)
	}
	spy := &spyFrames{inner: provider, seen: map[int][]byte{}}
	noFile := tracer.SourceFunc(func(context.Context, domain.Movie) (string, error) {
		t.Error("the tracer asked for the movie's file although the movie has a rendition")
		return "", fmt.Errorf("no file")
	})
	states := &tracer.MemoryStates{}
	tr, err := tracer.NewVideo(tracer.VideoOptions{Frames: spy, Source: noFile, States: states, CheckpointEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	p := domain.PlanTrace(m, domain.Lease{FromFrame: 3})
	frames, err := collect(t, tr, m, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != p.Frames || p.Frames != 21 {
		t.Fatalf("%d frames for a plan of %d", len(frames), p.Frames)
	}
	var sum float64
	n := 0
	for _, f := range frames {
		truth := s.Truth(f.Index)
		for k, pt := range f.Points {
			if pt.Lost {
				t.Fatalf("frame %d: %+v", f.Index, pt)
			}
			sum += math.Hypot(pt.PX-(truth[k].X+0.5), pt.PY-(truth[k].Y+0.5))
			n++
		}
	}
	if mean := sum / float64(n); mean > 0.4 {
		t.Fatalf("mean error %.3f px against the ground truth, read from the rendition", mean)
	} else {
		t.Logf("mean error %.3f px over %d points (the rendition: x264 CRF 20 of an x264 CRF 18 clip)", mean, n)
	}
	// A later segment resumes from a checkpoint: it reads from the rendition too.
	late, err := collect(t, tr, m, plan(31, 45, 2))
	if err != nil || len(late) == 0 || late[0].Index != 31 {
		t.Fatalf("a later segment: %v %+v", err, late)
	}
	if len(spy.seen) < p.Frames {
		t.Fatalf("the tracer read %d frames through the provider, the plan has %d", len(spy.seen), p.Frames)
	}
	for idx, gray := range spy.seen {
		jpg, err := provider.Image(context.Background(), m, idx)
		if err != nil {
			t.Fatal(err)
		}
		img, err := jpeg.Decode(bytes.NewReader(jpg))
		if err != nil {
			t.Fatal(err)
		}
		luma := lumaOf(t, img)
		if b := img.Bounds(); b.Dx() != m.Video.Width || b.Dy() != m.Video.Height || len(gray) != len(luma) {
			t.Fatalf("frame %d: image %v, rendition %dx%d, gray %d bytes", idx, b, m.Video.Width, m.Video.Height, len(gray))
		}
		if psnr := videotest.PSNR(gray, luma); psnr < 40 {
			t.Errorf("frame %d: the page's image is %.1f dB from what the tracer read", idx, psnr)
		}
		// Not the neighbour's image: the scene moves between frames.
		if idx+1 < m.FrameCount {
			next, _ := provider.Image(context.Background(), m, idx+1)
			ni, _ := jpeg.Decode(bytes.NewReader(next))
			if p := videotest.PSNR(gray, lumaOf(t, ni)); p >= videotest.PSNR(gray, luma) {
				t.Errorf("frame %d is as close to image %d (%.1f dB) as to its own", idx, idx+1, p)
			}
		}
	}
}

// lumaOf returns a JPEG's luma plane (full range, as the API encodes it).
func lumaOf(t *testing.T, img image.Image) []byte {
	t.Helper()
	yc, ok := img.(*image.YCbCr)
	if !ok {
		t.Fatalf("a %T, not YCbCr", img)
	}
	b := yc.Bounds()
	out := make([]byte, 0, b.Dx()*b.Dy())
	for y := range b.Dy() {
		out = append(out, yc.Y[y*yc.YStride:y*yc.YStride+b.Dx()]...)
	}
	return out
}

// The product's tracer has no file to fall back on: a movie without a
// rendition gets a sentence, not a read of its upload.
func TestVideoTracerWithoutRenditionOrFile(t *testing.T) {
	path, s := groundTruthClip(t, "clean", 6)
	_, ready := renditionOf(t, path, clipMovie(t, s, 0, 1), 60)
	tr, err := tracer.NewVideo(tracer.VideoOptions{Frames: &spyFrames{seen: map[int][]byte{}}})
	if err != nil {
		t.Fatal(err)
	}
	m := clipMovie(t, s, 0, 1) // no rendition recorded
	_, err = collect(t, tr, m, plan(0, 6, 1))
	if got, ok := tracer.SummaryOf(err); !ok || got != "The movie's frames have not been prepared: upload its video again." {
		t.Fatalf("%q %v", got, err)
	}
	if !tracer.HasRendition(ready) || tracer.HasRendition(m) {
		t.Fatal("HasRendition")
	}
}

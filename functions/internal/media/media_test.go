package media_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/video"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

const w, h = 96, 64

// indexed draws frame i of a w x h source: its index, read back by
// videotest.IndexOf even after lossy encodings.
func indexed(i int, gray []byte) { videotest.DrawIndex(w, h, i, gray) }

// objects is an in-memory bucket.
type objects struct {
	mu   sync.Mutex
	m    map[string][]byte
	puts int
}

func newObjects() *objects { return &objects{m: map[string][]byte{}} }

func (o *objects) Get(_ context.Context, key string) ([]byte, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	b, ok := o.m[key]
	if !ok {
		return nil, fmt.Errorf("no object %s", key)
	}
	return b, nil
}

func (o *objects) PresignGet(_ context.Context, key string, _ time.Duration) (string, error) {
	return "http://example.invalid/" + key, nil
}

func (o *objects) store(movieID string) func(context.Context, media.Chunk) error {
	return func(_ context.Context, c media.Chunk) error {
		b, err := os.ReadFile(c.Path)
		if err != nil {
			return err
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		o.m[media.ChunkKey(movieID, c.Index)] = b
		o.puts++
		return nil
	}
}

func source(t *testing.T, frames int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.mkv")
	if err := videotest.Encode(context.Background(), path, videotest.Options{Width: w, Height: h, FrameRate: 25, Frames: frames, Codec: videotest.FFV1}, indexed); err != nil {
		t.Fatal(err)
	}
	return path
}

func ffmpeg(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ffmpeg", append([]string{"-nostdin", "-v", "error", "-y"}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v %s", args, err, out)
	}
}

// prepare runs whole ranges until the movie is done and returns its row.
func prepare(t *testing.T, src string, objs *objects, id string, chunk int, ranges ...int) domain.Movie {
	t.Helper()
	ctx := context.Background()
	info, err := video.Probe(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	timing, _ := video.ProbeTiming(ctx, src)
	from := 0
	var res media.Prepared
	for i := 0; ; i++ {
		o := media.PrepareOptions{ChunkFrames: chunk, FromFrame: from, ExpectedFrames: info.FrameCount, FrameRate: info.FrameRate, Timing: timing}
		if i < len(ranges) {
			// A range that stops after ranges[i] chunks: its deadline is
			// simulated by a store that fails after them.
			stop := ranges[i]
			stored := 0
			put := objs.store(id)
			var errStop = errors.New("stop")
			r, err := media.Prepare(ctx, src, o, func(ctx context.Context, c media.Chunk) error {
				if stored == stop {
					return errStop
				}
				stored++
				return put(ctx, c)
			})
			if !errors.Is(err, errStop) {
				t.Fatalf("range %d: %+v %v", i, r, err)
			}
			from = r.NextFrame
			continue
		}
		res, err = media.Prepare(ctx, src, o, objs.store(id))
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	if !res.Done || res.Width < 1 {
		t.Fatalf("not done: %+v", res)
	}
	return domain.Movie{ID: id, FrameCount: res.NextFrame, FrameRate: info.FrameRate,
		Video: &domain.Video{Width: res.Width, Height: res.Height, ChunkFrames: chunk, Rendition: domain.RenditionX264}}
}

func readAll(t *testing.T, p *media.Provider, m domain.Movie, o video.ReadOptions) ([]int, [][]byte) {
	t.Helper()
	var idx []int
	var frames [][]byte
	err := p.ReadFrames(context.Background(), m, o, func(f video.Frame) error {
		idx = append(idx, f.Index)
		frames = append(frames, bytes.Clone(f.Gray))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return idx, frames
}

// TestFrameKIsFrameK: a movie prepared in one range or in several (a
// seek between them), read back through the provider with any range and
// step, gives frame k at index k, and the viewer's image of frame k is the
// tracer's frame k within 40 dB luma PSNR.
func TestFrameKIsFrameK(t *testing.T) {
	src := source(t, 100)
	objs := newObjects()
	whole := prepare(t, src, objs, "whole", 30)
	split := prepare(t, src, objs, "split", 30, 2, 1) // chunks 0-1, then 2, then the rest
	for _, m := range []domain.Movie{whole, split} {
		if m.FrameCount != 100 || m.Video.Width != w || m.Video.Height != h {
			t.Fatalf("%s: %+v %+v", m.ID, m, m.Video)
		}
		p, err := media.NewProvider(media.ProviderOptions{Objects: objs})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []video.ReadOptions{{}, {Start: 29, End: 95, Step: 4}, {Start: 60, End: 61}, {Start: 7, Step: 31}} {
			idx, frames := readAll(t, p, m, o)
			end := o.End
			if end == 0 {
				end = 100
			}
			want := 0
			for i := o.Start; i < end; i += max(o.Step, 1) {
				if want >= len(idx) || idx[want] != i {
					t.Fatalf("%s %+v: indexes %v", m.ID, o, idx)
				}
				if got := videotest.IndexOf(frames[want], m.Video.Width); got != i {
					t.Fatalf("%s %+v: frame %d shows frame %d", m.ID, o, i, got)
				}
				want++
			}
			if want != len(idx) {
				t.Fatalf("%s %+v: %d frames, want %d", m.ID, o, len(idx), want)
			}
		}
		_, gray := readAll(t, p, m, video.ReadOptions{})
		for _, n := range []int{0, 29, 30, 77, 99} {
			img, err := p.Image(context.Background(), m, n)
			if err != nil {
				t.Fatal(err)
			}
			if psnr := lumaPSNR(t, img, gray[n]); psnr < 40 {
				t.Fatalf("%s frame %d: image luma PSNR %.1f dB against the tracer's frame", m.ID, n, psnr)
			}
		}
		if _, err := p.Image(context.Background(), m, 100); err == nil {
			t.Fatal("frame 100 of 100 served")
		}
	}
	if objs.puts != 4+4 {
		t.Fatalf("%d chunk writes for two movies of 4 chunks", objs.puts)
	}
}

// lumaPSNR is the PSNR of a served JPEG's luma against a gray frame.
func lumaPSNR(t *testing.T, jpg, gray []byte) float64 {
	t.Helper()
	luma, _, _, err := videotest.JPEGLuma(jpg)
	if err != nil || len(luma) != len(gray) {
		t.Fatalf("image of %d pixels, gray of %d: %v", len(luma), len(gray), err)
	}
	return videotest.PSNR(luma, gray)
}

// TestCodecsBecomeRenditions: old and new codecs ffmpeg decodes are
// prepared, frame k still frame k.
func TestCodecsBecomeRenditions(t *testing.T) {
	src := source(t, 40)
	dir := t.TempDir()
	for _, f := range videotest.Foreigns {
		t.Run(f.Codec, func(t *testing.T) {
			path, err := videotest.Transcode(t.Context(), src, dir, f)
			if err != nil {
				t.Fatal(err)
			}
			objs := newObjects()
			m := prepare(t, path, objs, "m", 16)
			if m.FrameCount != 40 {
				t.Fatalf("%d frames", m.FrameCount)
			}
			p, _ := media.NewProvider(media.ProviderOptions{Objects: objs})
			idx, frames := readAll(t, p, m, video.ReadOptions{})
			for i := range idx {
				if got := videotest.IndexOf(frames[i], m.Video.Width); got != idx[i] {
					t.Fatalf("frame %d shows frame %d", idx[i], got)
				}
			}
		})
	}
}

// TestRotationAndAspect: a phone clip's display rotation is applied, and
// non-square pixels are made square, in what the tracer and viewer read.
func TestRotationAndAspect(t *testing.T) {
	src := source(t, 10)
	dir := t.TempDir()
	h264 := filepath.Join(dir, "h.mp4")
	ffmpeg(t, "-i", src, "-c:v", "libx264", "-pix_fmt", "yuv420p", h264)
	rotated := filepath.Join(dir, "rot.mp4")
	ffmpeg(t, "-i", h264, "-c", "copy", "-metadata:s:v:0", "rotate=90", rotated)
	info, err := video.Probe(context.Background(), rotated)
	if err != nil || info.Rotation == 0 {
		t.Fatalf("rotation not probed: %+v %v", info, err)
	}
	m := prepare(t, rotated, newObjects(), "r", 8)
	if m.Video.Width != h || m.Video.Height != w {
		t.Fatalf("rotated 96x64 prepared as %dx%d", m.Video.Width, m.Video.Height)
	}
	wide := filepath.Join(dir, "sar.mp4")
	ffmpeg(t, "-i", src, "-vf", "setsar=2/1", "-c:v", "libx264", "-pix_fmt", "yuv420p", wide)
	if info, err := video.Probe(context.Background(), wide); err != nil || info.SampleAspect != [2]int{2, 1} {
		t.Fatalf("aspect not probed: %+v %v", info, err)
	}
	m = prepare(t, wide, newObjects(), "s", 8)
	if m.Video.Width != 2*w || m.Video.Height != h {
		t.Fatalf("96x64 at 2:1 pixels prepared as %dx%d", m.Video.Width, m.Video.Height)
	}
}

// TestVariableFrameRate: a VFR file's frames are numbered by decode index
// on the rendition's constant timeline: none dropped or duplicated.
func TestVariableFrameRate(t *testing.T) {
	src := source(t, 30)
	vfr := filepath.Join(t.TempDir(), "vfr.mkv")
	// Timestamps 0, 1, 3, 6, ... (in 1/25 s): a rate that varies.
	ffmpeg(t, "-i", src, "-vf", "setpts='(N*(N+1)/2)/(25*TB)'", "-vsync", "passthrough", "-c:v", "ffv1", vfr)
	objs := newObjects()
	m := prepare(t, vfr, objs, "v", 8)
	if m.FrameCount != 30 {
		t.Fatalf("%d frames, want 30", m.FrameCount)
	}
	p, _ := media.NewProvider(media.ProviderOptions{Objects: objs})
	idx, frames := readAll(t, p, m, video.ReadOptions{Start: 3})
	for i := range idx {
		if got := videotest.IndexOf(frames[i], m.Video.Width); got != idx[i] {
			t.Fatalf("frame %d shows frame %d", idx[i], got)
		}
	}
}

func TestBadSources(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "t.mp4")
	if err := os.WriteFile(text, []byte("not a movie"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := media.Prepare(context.Background(), text, media.PrepareOptions{ChunkFrames: 8, FrameRate: 25}, newObjects().store("x"))
	if !errors.Is(err, video.ErrNotVideo) {
		t.Fatalf("text: %v", err)
	}
	for _, o := range []media.PrepareOptions{{ChunkFrames: 8, FromFrame: 3, FrameRate: 25}, {ChunkFrames: 8}, {ChunkFrames: -1, FrameRate: 1}} {
		if _, err := media.Prepare(context.Background(), text, o, nil); err == nil || errors.Is(err, video.ErrNotVideo) {
			t.Errorf("%+v: %v", o, err)
		}
	}
	p, _ := media.NewProvider(media.ProviderOptions{Objects: newObjects()})
	if _, err := p.Image(context.Background(), domain.Movie{ID: "x", FrameCount: 3}, 0); err == nil {
		t.Fatal("a movie without a rendition served an image")
	}
}

func TestChunkKeysSortAndStayUnderTheMovie(t *testing.T) {
	keys := []string{media.ChunkKey("m", 10), media.ChunkKey("m", 9), media.ChunkKey("m", 100)}
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	if sorted[0] != keys[1] || sorted[2] != keys[2] {
		t.Fatalf("%v", sorted)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "frames/m/") {
			t.Fatalf("%s is not under the movie's prefix", k)
		}
	}
}

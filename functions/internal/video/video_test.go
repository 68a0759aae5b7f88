package video_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/video"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

const w, h = 64, 48

// pattern is frame i's content: every pixel depends on the frame index and
// its position, so a frame off by one differs in every pixel.
func pattern(i int, gray []byte) {
	for y := range h {
		for x := range w {
			gray[y*w+x] = byte(i*7 + x*3 + y*5)
		}
	}
}

func clip(t *testing.T, name string, frames int, codec videotest.Codec, extra ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	err := videotest.Encode(context.Background(), path, videotest.Options{
		Width: w, Height: h, FrameRate: 25, Frames: frames, Codec: codec, Extra: extra,
	}, pattern)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func TestProbe(t *testing.T) {
	for name, c := range map[string]struct {
		file  string
		codec videotest.Codec
		want  string
	}{
		"h264 lossless": {"a.mp4", videotest.H264Lossless, "h264"},
		"h264":          {"b.mp4", videotest.H264, "h264"},
		"ffv1":          {"c.mkv", videotest.FFV1, "ffv1"},
	} {
		t.Run(name, func(t *testing.T) {
			info, err := video.Probe(context.Background(), clip(t, c.file, 37, c.codec))
			if err != nil {
				t.Fatal(err)
			}
			want := video.Info{FrameCount: 37, FrameRate: 25, Width: w, Height: h, Duration: 1480 * time.Millisecond, Codec: c.want, SampleAspect: [2]int{1, 1}}
			if info != want {
				t.Fatalf("got %+v, want %+v", info, want)
			}
		})
	}
}

func TestReadFramesIsFrameAccurate(t *testing.T) {
	for _, codec := range []videotest.Codec{videotest.H264Lossless, videotest.FFV1} {
		src := clip(t, "a.mkv", 40, codec)
		for _, o := range []video.ReadOptions{
			{},                           // everything
			{Start: 5, End: 23, Step: 3}, // 5, 8, ..., 20
			{Start: 39, End: 40},         // the last frame only
			{Start: 0, End: 1},           // the first
			{Start: 10, Step: 7},         // to the end: 10, 17, 24, 31, 38
		} {
			var got []int
			want := make([]byte, w*h)
			err := video.ReadFrames(context.Background(), src, o, func(f video.Frame) error {
				got = append(got, f.Index)
				if f.Width != w || f.Height != h || len(f.Gray) != w*h {
					t.Fatalf("frame %d is %dx%d (%d bytes)", f.Index, f.Width, f.Height, len(f.Gray))
				}
				pattern(f.Index, want)
				if !bytes.Equal(f.Gray, want) {
					t.Fatalf("codec %d %+v: frame %d's pixels differ from what was encoded as frame %d", codec, o, f.Index, f.Index)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("%+v: %v", o, err)
			}
			var exp []int
			end := o.End
			if end == 0 {
				end = 40
			}
			for i := o.Start; i < end; i += max(o.Step, 1) {
				exp = append(exp, i)
			}
			if !equal(got, exp) {
				t.Fatalf("%+v: indexes %v, want %v", o, got, exp)
			}
		}
	}
}

func TestHTTPSource(t *testing.T) {
	src := clip(t, "a.mkv", 12, videotest.FFV1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, src) }))
	defer srv.Close()
	url := srv.URL + "/movie.mkv?X-Amz-Signature=abc"
	info, err := video.Probe(context.Background(), url)
	if err != nil || info.FrameCount != 12 {
		t.Fatalf("%+v %v", info, err)
	}
	want := make([]byte, w*h)
	n := 0
	err = video.ReadFrames(context.Background(), url, video.ReadOptions{Start: 4, End: 12, Step: 4}, func(f video.Frame) error {
		pattern(f.Index, want)
		if f.Index != 4+4*n || !bytes.Equal(f.Gray, want) {
			t.Fatalf("frame %d (#%d) differs", f.Index, n)
		}
		n++
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("%d frames, %v", n, err)
	}
}

func TestReadFramesScales(t *testing.T) {
	src := clip(t, "a.mp4", 10, videotest.H264)
	n := 0
	err := video.ReadFrames(context.Background(), src, video.ReadOptions{End: 10, Width: 32, Height: 24}, func(f video.Frame) error {
		if f.Width != 32 || f.Height != 24 || len(f.Gray) != 32*24 {
			t.Fatalf("%dx%d, %d bytes", f.Width, f.Height, len(f.Gray))
		}
		n++
		return nil
	})
	if err != nil || n != 10 {
		t.Fatalf("%d frames, %v", n, err)
	}
}

func TestReadFramesPastTheEndIsTruncated(t *testing.T) {
	src := clip(t, "a.mkv", 10, videotest.FFV1)
	n := 0
	err := video.ReadFrames(context.Background(), src, video.ReadOptions{Start: 5, End: 20}, func(video.Frame) error { n++; return nil })
	if !errors.Is(err, video.ErrTruncated) || n != 5 {
		t.Fatalf("%d frames, %v", n, err)
	}
}

func TestReadFramesStopsOnCallbackErrorAndCancel(t *testing.T) {
	src := clip(t, "a.mkv", 200, videotest.FFV1)
	stop := errors.New("stop")
	n := 0
	err := video.ReadFrames(context.Background(), src, video.ReadOptions{}, func(video.Frame) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Fatalf("%d frames, %v", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	err = video.ReadFrames(ctx, src, video.ReadOptions{End: 200}, func(video.Frame) error {
		if n++; n == 2 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 2 {
		t.Fatalf("%d frames, %v", n, err)
	}
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, err := os.ReadFile(clip(t, "good.mp4", 30, videotest.H264))
	if err != nil {
		t.Fatal(err)
	}
	fast := clip(t, "fast.mp4", 30, videotest.H264, "-movflags", "+faststart")
	fastData, err := os.ReadFile(fast)
	if err != nil {
		t.Fatal(err)
	}
	audio := filepath.Join(dir, "audio.m4a")
	still := filepath.Join(dir, "still.png")
	cinepak := filepath.Join(dir, "cinepak.avi")
	for _, args := range [][]string{
		{"-f", "lavfi", "-i", "sine", "-t", "0.5", audio},
		{"-f", "lavfi", "-i", "testsrc=size=32x32", "-frames:v", "1", still},
		{"-f", "lavfi", "-i", "testsrc=size=32x32", "-frames:v", "5", "-c:v", "cinepak", cinepak},
	} {
		if out, err := exec.Command("ffmpeg", append([]string{"-v", "error", "-y"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg %v: %v %s", args, err, out)
		}
	}
	for name, c := range map[string]struct {
		src  string
		want error
	}{
		"text":                      {write("notes.mp4", []byte("hello, this is not a movie\n")), video.ErrNotVideo},
		"random bytes":              {write("r.mov", bytes.Repeat([]byte{0x5a, 0x13, 0xff}, 3000)), video.ErrNotVideo},
		"zero length":               {write("empty.mp4", nil), video.ErrNotVideo},
		"truncated, index at end":   {write("t1.mp4", good[:len(good)/2]), video.ErrTruncated},
		"truncated, index at start": {write("t2.mp4", fastData[:len(fastData)*2/3]), video.ErrTruncated},
		"audio only":                {audio, video.ErrNotVideo},
		"still image":               {still, video.ErrNotVideo},
		"not a file or URL":         {"ftp://example.com/a.mp4", video.ErrBadSource},
		"empty source":              {"", video.ErrBadSource},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := video.Probe(context.Background(), c.src)
			if !errors.Is(err, c.want) {
				t.Fatalf("Probe: %v, want %v", err, c.want)
			}
		})
	}
	// An old codec the bundled ffmpeg decodes is accepted (the ingest transcodes it).
	if info, err := video.Probe(context.Background(), cinepak); err != nil || info.Codec != "cinepak" {
		t.Fatalf("cinepak: %+v %v", info, err)
	}
	// The frame reader on the same garbage fails with a typed error too.
	for name, src := range map[string]string{
		"text":      write("notes2.mp4", []byte("hello")),
		"truncated": write("t3.mp4", good[:len(good)/2]),
	} {
		err := video.ReadFrames(context.Background(), src, video.ReadOptions{Width: w, Height: h}, func(video.Frame) error { return nil })
		if !errors.Is(err, video.ErrNotVideo) && !errors.Is(err, video.ErrTruncated) {
			t.Errorf("ReadFrames %s: %v", name, err)
		}
	}
	// A file name that looks like an option or another protocol is a file name.
	if _, err := video.Probe(context.Background(), "concat:"+fast+"|"+fast); err == nil {
		t.Fatal("concat: accepted")
	}
	for _, o := range []video.ReadOptions{{Start: -1}, {Start: 5, End: 5}, {Step: -1}, {Width: 10}, {Width: 1 << 20, Height: 1}} {
		if err := video.ReadFrames(context.Background(), fast, o, func(video.Frame) error { return nil }); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

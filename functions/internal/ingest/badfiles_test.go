package ingest_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/video"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// ff runs ffmpeg with args (the last one its output) and returns the
// output file's bytes.
func ff(t *testing.T, args ...string) []byte {
	t.Helper()
	if out, err := exec.Command("ffmpeg", append([]string{"-nostdin", "-v", "error", "-y"}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v %s", args, err, out)
	}
	data, err := os.ReadFile(args[len(args)-1])
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Each kind of file the ingest cannot use fails once, with the sentence
// the user reads (exactly), before any frame is prepared: the movie is
// ingest_failed with nothing stored under its frames, the message is not
// retried, the movie can be deleted, and a good file uploaded again as a
// new movie becomes ready.
func TestIngestOfBadFilesSaysWhatIsWrong(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	in := func(name string) string { return filepath.Join(dir, name) }
	_, good := movingSquare(t, 20, 10)
	garbage := make([]byte, 64<<10)
	for i := range garbage {
		garbage[i] = byte(rand.IntN(256))
	}
	lavfi := func(src string, frames int, args ...string) []string {
		return append([]string{"-f", "lavfi", "-i", src, "-frames:v", strconv.Itoa(frames)}, args...)
	}
	for _, c := range []struct {
		name string
		file []byte
		// declared, when not 0, is the size the upload declared (another
		// size arrives).
		declared int64
		want     string
	}{
		{"zero-length", nil, 1000, "The file that arrived has 0 bytes, but the upload declared 1000: upload the complete file again."},
		{"text", []byte("These are my notes, not a movie.\n"), 0, "The file is not a video file."},
		{"garbage", garbage, 0, "The file is not a video file."},
		{"truncated", good[:len(good)/2], 0, "The video file is truncated: upload the complete file again."},
		{"audio only", ff(t, "-f", "lavfi", "-i", "sine", "-t", "1", "-f", "mp4", in("audio.mp4")), 0,
			"The file has no video stream (it may hold only sound)."},
		{"PNG named .mp4", ff(t, append(lavfi("testsrc=size=32x32", 1), "-f", "image2", "-c:v", "png", in("png.mp4"))...), 0,
			"The file is a still image, not a video."},
		{"JPEG named .mp4", ff(t, append(lavfi("testsrc=size=32x32", 1), "-f", "image2", "-c:v", "mjpeg", in("jpeg.mp4"))...), 0,
			"The file is a still image, not a video."},
		{"8200 pixels wide", ff(t, append(lavfi("testsrc=size=8200x16:rate=10", 3), "-c:v", "ffv1", in("wide.mkv"))...), 0,
			"The video's frames are 8200x16 pixels: at most 8192 pixels a side can be prepared."},
		{"5000 fps declared", ff(t, append(lavfi("testsrc=size=96x64:rate=5000", 30), "-c:v", "libx264", "-pix_fmt", "yuv420p", in("fast.mp4"))...), 0,
			"The video declares 5000 frames per second: from 0.001 (one frame every 1,000 seconds) to 1000 can be prepared."},
		{"0.0001 fps declared", ff(t, append(lavfi("testsrc=size=96x64:rate=1/10000", 3), "-c:v", "libx264", "-pix_fmt", "yuv420p", in("slow.mp4"))...), 0,
			"The video declares 0.0001 frames per second: from 0.001 (one frame every 1,000 seconds) to 1000 can be prepared."},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := safeID(c.name)
			if c.declared == 0 {
				e.upload(id, c.file)
			} else {
				now := time.Now()
				mc := domain.CreateMovie{ID: id, Title: c.name, MaxBytes: 1 << 30, Now: now,
					Upload: domain.Upload{FileName: "a.mp4", ContentType: "video/mp4", SizeBytes: c.declared, ExpiresAt: now.Add(time.Hour)}}
				if err := e.movies.Create(t.Context(), mc.Movie()); err != nil {
					t.Fatal(err)
				}
				// Not through the presigned PUT (it signs the declared size).
				if err := e.files.Put(t.Context(), s3store.UploadKey(id), "video/mp4", c.file); err != nil {
					t.Fatal(err)
				}
			}
			ev := e.receive()
			if len(ev.Records) != 1 {
				t.Fatalf("%d messages", len(ev.Records))
			}
			if resp := e.handle(ev); len(resp.BatchItemFailures) != 0 {
				t.Fatalf("a bad file is not worth a retry: %+v\n%s", resp, e.logs)
			}
			m := e.get(id)
			if m.Status != domain.StatusIngestFailed || m.IngestFailure != c.want {
				t.Fatalf("%s %q, want %q", m.Status, m.IngestFailure, c.want)
			}
			if m.Progress.FramesWritten != 0 || m.FrameCount != 0 || m.Video != nil {
				t.Fatalf("a failed movie with frames: %+v %d %+v", m.Progress, m.FrameCount, m.Video)
			}
			if n := chunksOf(t, e, id, 3); n != 0 {
				t.Fatalf("%d chunks stored", n)
			}
			// Redelivered: nothing changes.
			if resp := e.handle(ev); len(resp.BatchItemFailures) != 0 || e.get(id).Version != m.Version {
				t.Fatalf("the redelivery changed the movie: %+v", resp)
			}
			if _, err := e.movies.Commit(t.Context(), id, domain.DeleteMovie{Now: time.Now()}); err != nil {
				t.Fatalf("the failed movie cannot be deleted: %v", err)
			}
		})
	}
	// The user uploads the file again, as a new movie: it is ready.
	e.upload("again1", good)
	if resp := e.handle(e.receive()); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v", resp)
	}
	if m := e.get("again1"); m.Status != domain.StatusReady || m.FrameCount != 20 {
		t.Fatalf("the good file uploaded again: %s %q %d frames", m.Status, m.IngestFailure, m.FrameCount)
	}
}

// Files that look odd but are videos become ready, every frame in place
// (frame k shows k, in what the tracer reads and in the image the page is
// served): a phone clip's rotation (upright, its sides swapped), a
// variable frame rate (frames numbered by decode order on a constant
// timeline), a slow time-lapse declared at 0.001 frames per second, and
// the older and newer codecs of videotest.Foreigns (msmpeg4v3, mpeg4 part
// 2, cinepak, h264, hevc, vp9), their codec recorded.
func TestIngestOfOddButGoodFiles(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src.mkv")
	if err := videotest.Encode(t.Context(), src, videotest.Options{Width: 96, Height: 64, FrameRate: 25, Frames: 30, Codec: videotest.FFV1},
		func(i int, gray []byte) { videotest.DrawIndex(96, 64, i, gray) }); err != nil {
		t.Fatal(err)
	}
	h264 := filepath.Join(dir, "h.mp4")
	ff(t, "-i", src, "-c:v", "libx264", "-pix_fmt", "yuv420p", h264)
	type odd struct {
		name          string
		file          []byte
		width, height int
		rate          float64
		codec         string // when not "", what the movie's video records
	}
	cases := []odd{
		{"rotated 90", ff(t, "-i", h264, "-c", "copy", "-metadata:s:v:0", "rotate=90", filepath.Join(dir, "rot.mp4")), 64, 96, 25, ""},
		{"variable rate", ff(t, "-i", src, "-vf", "setpts='(N*(N+1)/2)/(25*TB)'", "-vsync", "passthrough", "-c:v", "ffv1", filepath.Join(dir, "vfr.mkv")), 96, 64, 0, ""},
		{"0.001 fps", ff(t, "-i", src, "-vf", "setpts=N*1000/TB", "-r", "1/1000", "-vsync", "passthrough", "-c:v", "libx264", "-pix_fmt", "yuv420p", filepath.Join(dir, "slow.mp4")), 96, 64, 0.001, ""},
	}
	for _, f := range videotest.Foreigns {
		path, err := videotest.Transcode(t.Context(), src, dir, f)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, odd{f.Codec + f.Ext, data, 96, 64, 25, f.Codec})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := safeID(c.name)
			e.upload(id, c.file)
			if resp := e.handle(e.receive()); len(resp.BatchItemFailures) != 0 {
				t.Fatalf("%+v\n%s", resp, e.logs)
			}
			m := e.get(id)
			if m.Status != domain.StatusReady || m.FrameCount != 30 || m.Video.Width != c.width || m.Video.Height != c.height ||
				(c.rate != 0 && m.FrameRate != c.rate) || (c.codec != "" && m.Video.Codec != c.codec) {
				t.Fatalf("%s %q: %d frames at %g fps, video %+v", m.Status, m.IngestFailure, m.FrameCount, m.FrameRate, m.Video)
			}
			t.Logf("rendition %q, chunks of %d", m.Video.Rendition, m.Video.ChunkFrames)
			p, err := media.NewProvider(media.ProviderOptions{Objects: e.files})
			if err != nil {
				t.Fatal(err)
			}
			// What ffmpeg shows of the upload (upright: its autorotate).
			path := filepath.Join(t.TempDir(), "upload")
			if err := os.WriteFile(path, c.file, 0o600); err != nil {
				t.Fatal(err)
			}
			var shown [][]byte
			if err := video.ReadFrames(t.Context(), path, video.ReadOptions{Width: c.width, Height: c.height}, func(f video.Frame) error {
				shown = append(shown, bytes.Clone(f.Gray))
				return nil
			}); err != nil || len(shown) != 30 {
				t.Fatalf("%d frames of the upload: %v", len(shown), err)
			}
			next := 0
			err = p.ReadFrames(t.Context(), m, video.ReadOptions{}, func(f video.Frame) error {
				if f.Index != next {
					t.Fatalf("frame %d read as %d", next, f.Index)
				}
				if c.width > c.height && videotest.IndexOf(f.Gray, f.Width) != f.Index {
					t.Fatalf("frame %d shows frame %d", f.Index, videotest.IndexOf(f.Gray, f.Width))
				}
				// Nearest to the upload's own frame k as ffmpeg shows it.
				own := videotest.PSNR(f.Gray, shown[f.Index])
				for _, o := range []int{f.Index - 1, f.Index + 1} {
					if o >= 0 && o < 30 && videotest.PSNR(f.Gray, shown[o]) >= own {
						t.Fatalf("frame %d is nearer to the upload's frame %d", f.Index, o)
					}
				}
				if own < 35 {
					t.Fatalf("frame %d: %.1f dB from the upload's", f.Index, own)
				}
				next++
				return nil
			})
			if err != nil || next != 30 {
				t.Fatalf("read %d of 30 frames: %v", next, err)
			}
			// The page's image of frame k (GET .../frames/{k}/image) shows k.
			for k := range 30 {
				jpg, err := p.Image(t.Context(), m, k)
				if err != nil {
					t.Fatalf("image of frame %d: %v", k, err)
				}
				luma, width, height, err := videotest.JPEGLuma(jpg)
				if err != nil || width != c.width || height != c.height {
					t.Fatalf("image of frame %d: %dx%d %v", k, width, height, err)
				}
				if got := videotest.IndexOf(luma, width); c.width > c.height && got != k {
					t.Fatalf("the image of frame %d shows frame %d", k, got)
				}
			}
		})
	}
}

// safeID makes a movie ID of a case name.
func safeID(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(bytes.Trim(b, "-"))
}

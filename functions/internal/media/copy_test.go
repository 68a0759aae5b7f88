package media_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/video"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// h264 encodes src (indexed) as H.264 with extra x264 arguments.
func h264(t *testing.T, src, name string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	ffmpeg(t, append(append([]string{"-i", src, "-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-pix_fmt", "yuv420p"}, args...), out)...)
	return out
}

// cameraGOP are x264 arguments that make what a camera or OBS writes: a
// keyframe every 30 frames, closed GOPs, B-frames.
var cameraGOP = []string{"-bf", "3", "-g", "30", "-keyint_min", "30", "-sc_threshold", "0"}

// prepareRanges runs PrepareRange until the movie is done, each range
// after ranges[i] chunks (the rest in one), and returns its row.
func prepareRanges(t *testing.T, src string, objs *objects, id string, ranges ...int) (domain.Movie, media.Plan, media.Prepared) {
	t.Helper()
	ctx := context.Background()
	info, err := video.Probe(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	plan := media.PlanRendition(ctx, src, info, 0)
	from := 0
	total := media.Prepared{}
	for i := 0; ; i++ {
		o := media.PrepareOptions{FromFrame: from, ExpectedFrames: info.FrameCount, FrameRate: info.FrameRate}
		if i < len(ranges) {
			o.MaxChunks = ranges[i]
		}
		res, err := media.PrepareRange(ctx, src, plan, o, objs.store(id))
		if err != nil {
			t.Fatalf("range %d from %d: %v", i, from, err)
		}
		total.Stored += res.Stored
		total.Copied += res.Copied
		if total.Width == 0 {
			total.Width, total.Height = res.Width, res.Height
		}
		if res.Done {
			total.NextFrame, total.Done = res.NextFrame, true
			break
		}
		if res.NextFrame <= from {
			t.Fatalf("range %d made no progress from %d", i, from)
		}
		from = res.NextFrame
	}
	return domain.Movie{ID: id, FrameCount: total.NextFrame, FrameRate: info.FrameRate,
		Video: &domain.Video{Width: total.Width, Height: total.Height, ChunkFrames: plan.ChunkFrames, Rendition: plan.Rendition()}}, plan, total
}

// decodeUpload is every gray frame of the upload itself, as the old path
// (and a reader of the file) decodes it.
func decodeUpload(t *testing.T, src string) [][]byte {
	t.Helper()
	var frames [][]byte
	err := video.ReadFrames(context.Background(), src, video.ReadOptions{}, func(f video.Frame) error {
		frames = append(frames, bytes.Clone(f.Gray))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return frames
}

func bFrames(t *testing.T, src string) int {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pict_type", "-of", "csv=p=0", src).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(out), "B")
}

// TestRemuxFrameKIsFrameK: an H.264 upload with a fixed, closed GOP and
// B-frames is remuxed (no chunk encoded), in one range or in several
// (seeks between them), and frame k of the chunks is frame k of the
// upload, bit for bit, for the tracer (ReadFrames) and the viewer (Image).
func TestRemuxFrameKIsFrameK(t *testing.T) {
	src := h264(t, source(t, 100), "camera.mp4", cameraGOP...)
	if b := bFrames(t, src); b < 20 {
		t.Fatalf("the clip has %d B-frames", b)
	}
	want := decodeUpload(t, src)
	objs := newObjects()
	for _, ranges := range [][]int{nil, {2, 1}, {1, 1, 1, 1}} {
		id := fmt.Sprintf("r%d", len(ranges))
		m, plan, res := prepareRanges(t, src, objs, id, ranges...)
		if plan.Copy == nil || plan.ChunkFrames != 30 || plan.Rendition() != domain.RenditionCopy {
			t.Fatalf("plan %+v (%s)", plan, plan.Reason)
		}
		if m.FrameCount != 100 || res.Stored != 4 || res.Copied != 4 || m.Video.Width != w || m.Video.Height != h {
			t.Fatalf("%v: %+v %+v", ranges, m, res)
		}
		p, err := media.NewProvider(media.ProviderOptions{Objects: objs})
		if err != nil {
			t.Fatal(err)
		}
		idx, gray := readAll(t, p, m, video.ReadOptions{})
		if len(gray) != len(want) {
			t.Fatalf("%v: %d frames read, the upload has %d", ranges, len(gray), len(want))
		}
		for k := range gray {
			if idx[k] != k || !bytes.Equal(gray[k], want[k]) || videotest.IndexOf(gray[k], w) != k {
				t.Fatalf("%v: frame %d (index %d, shows %d) is not the upload's frame %d", ranges, k, idx[k], videotest.IndexOf(gray[k], w), k)
			}
		}
		for _, n := range []int{0, 29, 30, 61, 99} {
			img, err := p.Image(context.Background(), m, n)
			if err != nil {
				t.Fatal(err)
			}
			if psnr := lumaPSNR(t, img, want[n]); psnr < 40 {
				t.Fatalf("frame %d: image luma PSNR %.1f dB against the upload's frame", n, psnr)
			}
		}
	}
}

// TestWhatIsEncoded: uploads the remux cannot carry exactly are encoded
// in chunks of 60, with the reason.
func TestWhatIsEncoded(t *testing.T) {
	src := source(t, 100)
	h := h264(t, src, "ok.mp4", cameraGOP...)
	rotated := filepath.Join(t.TempDir(), "rotated.mp4")
	ffmpeg(t, "-i", h, "-c", "copy", "-metadata:s:v:0", "rotate=90", rotated)
	ts := filepath.Join(t.TempDir(), "camera.ts")
	ffmpeg(t, "-i", h, "-c", "copy", ts)
	// A keyframe's packet damaged: the plan's keyframe decode says so.
	badKey := h264(t, src, "badkey.mp4", append(cameraGOP, "-movflags", "+faststart")...)
	pos, size := packetAt(t, badKey, 30)
	corrupt(t, badKey, pos+size/2, 8)
	for _, c := range []struct {
		name, src, why string
	}{
		{"ffv1", src, "codec"},
		{"a forced extra keyframe", h264(t, src, "extra.mp4", append(cameraGOP, "-force_key_frames", "expr:eq(n,45)")...), "keyframes are not every 30"},
		{"long GOP", h264(t, source(t, 300), "long.mp4", "-g", "150", "-keyint_min", "150", "-sc_threshold", "0"), "keyframe interval 150"},
		{"open GOP", h264(t, src, "open.mp4", append(cameraGOP, "-x264-params", "open-gop=1")...), "not closed"},
		{"4:4:4", h264(t, src, "yuv444.mp4", append(cameraGOP, "-pix_fmt", "yuv444p")...), "profile"},
		{"rotated", rotated, "rotated"},
		{"MPEG-TS", ts, "container"},
		{"wide pixels", h264(t, src, "sar.mp4", append(cameraGOP, "-vf", "setsar=2/1")...), "square"},
		{"a damaged keyframe", badKey, "keyframes could not be decoded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			info, err := video.Probe(context.Background(), c.src)
			if err != nil {
				t.Fatal(err)
			}
			plan := media.PlanRendition(context.Background(), c.src, info, 0)
			if plan.Copy != nil || plan.ChunkFrames != media.DefaultChunkFrames || !strings.Contains(plan.Reason, c.why) {
				t.Fatalf("plan %+v, reason %q, want one with %q", plan.Copy, plan.Reason, c.why)
			}
		})
	}
}

// corrupt overwrites n bytes at off with garbage.
func corrupt(t *testing.T, path string, off int64, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	garbage := bytes.Repeat([]byte{0x5a, 0xff, 0x00, 0x13}, n/4+1)[:n]
	if _, err := f.WriteAt(garbage, off); err != nil {
		t.Fatal(err)
	}
}

// packetAt is the byte position and size of the video's packet i.
func packetAt(t *testing.T, path string, i int) (pos, size int64) {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pos,size", "-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(out))
	if i >= len(lines) {
		t.Fatalf("%d packets", len(lines))
	}
	if _, err := fmt.Sscanf(lines[i], "%d,%d", &pos, &size); err != nil {
		t.Fatal(err)
	}
	return pos, size
}

func truncate(t *testing.T, path string, percent int64) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()*percent/100); err != nil {
		t.Fatal(err)
	}
}

// TestRemuxOfGarbagePackets: an upload that claims H.264 with closed GOPs
// but whose packets in one GOP are garbage has the chunks that cannot be
// proven encoded instead, the rest remuxed; one cut off in its last GOP
// is encoded (its packets cannot all be read) or refused as truncated (an
// MP4 whose index promises more). Either way frame k of what becomes ready
// is the decoder's frame k of the upload.
func TestRemuxOfGarbagePackets(t *testing.T) {
	src := source(t, 100)
	damaged := h264(t, src, "damaged.mp4", append(cameraGOP, "-movflags", "+faststart")...)
	st, err := os.Stat(damaged)
	if err != nil {
		t.Fatal(err)
	}
	_ = st
	pos, size := packetAt(t, damaged, 65)
	corrupt(t, damaged, pos+size/2, 8)
	truncated := h264(t, src, "truncated.mkv", cameraGOP...)
	truncate(t, truncated, 93)
	for _, c := range []struct {
		path   string
		copied bool
	}{{damaged, true}, {truncated, false}} {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			want := decodeUpload(t, c.path)
			objs := newObjects()
			m, plan, res := prepareRanges(t, c.path, objs, "d", 1, 1)
			if plan.Copy != nil && !c.copied {
				t.Fatalf("remuxed, want encoded")
			}
			t.Logf("remuxed %d of %d chunks (%s)", res.Copied, res.Stored, plan.Reason)
			if plan.Copy != nil && (res.Copied == 0 || res.Copied == res.Stored) {
				t.Fatalf("%d of %d chunks remuxed: the damage was not seen, or nothing was remuxed", res.Copied, res.Stored)
			}
			p, err := media.NewProvider(media.ProviderOptions{Objects: objs})
			if err != nil {
				t.Fatal(err)
			}
			_, gray := readAll(t, p, m, video.ReadOptions{})
			if len(gray) != len(want) {
				t.Fatalf("%d frames, the upload decodes to %d", len(gray), len(want))
			}
			for k := range gray {
				if psnr := videotest.PSNR(gray[k], want[k]); psnr < 30 {
					t.Fatalf("frame %d is not the upload's frame %d (%.1f dB)", k, k, psnr)
				}
			}
		})
	}
	cut := h264(t, src, "cut.mp4", append(cameraGOP, "-movflags", "+faststart")...)
	truncate(t, cut, 80)
	if _, err := video.Probe(context.Background(), cut); !errors.Is(err, video.ErrTruncated) {
		t.Fatalf("an MP4 cut in its last GOP: %v", err)
	}
}

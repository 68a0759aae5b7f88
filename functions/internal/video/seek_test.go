package video_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/movietrace/tracinglocks/functions/internal/video"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// readAll returns the indexes and copies of the frames a read delivers.
func readAll(t *testing.T, src string, o video.ReadOptions) ([]int, [][]byte) {
	t.Helper()
	var idx []int
	var px [][]byte
	err := video.ReadFrames(context.Background(), src, o, func(f video.Frame) error {
		idx = append(idx, f.Index)
		px = append(px, bytes.Clone(f.Gray))
		return nil
	})
	if err != nil {
		t.Fatalf("%+v: %v", o, err)
	}
	return idx, px
}

// TestSeekingIsFrameExact (issue 12: a continuation segment starting at
// frame F used to decode the F frames before it): with the source's timing,
// a read that starts after frame 0 seeks (ffmpeg -ss before -i) and
// delivers exactly the frames, pixel for pixel, that decoding from frame 0
// delivers: at a keyframe, just before and after one, mid-GOP, the last
// frame, with steps, lossy h264 with B-frames included.
func TestSeekingIsFrameExact(t *testing.T) {
	const frames = 60
	for name, codec := range map[string]videotest.Codec{"h264": videotest.H264, "h264-lossless": videotest.H264Lossless, "ffv1": videotest.FFV1} {
		t.Run(name, func(t *testing.T) {
			src := clip(t, "s."+map[bool]string{true: "mkv", false: "mp4"}[codec == videotest.FFV1], frames, codec, "-g", "12")
			timing, err := video.ProbeTiming(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			if timing.Rate != 25 || timing.Offset != 0 {
				t.Fatalf("timing %+v, want 25 fps from the start", timing)
			}
			var mu sync.Mutex
			var runs [][]string
			defer video.SetFFmpegArgsHook(func(a []string) { mu.Lock(); runs = append(runs, slices.Clone(a)); mu.Unlock() })()
			for _, o := range []video.ReadOptions{
				{Start: 1, End: 5}, {Start: 11, End: 14}, {Start: 12, End: 13}, {Start: 13, End: 30, Step: 3},
				{Start: 30}, {Start: 47, Step: 5}, {Start: 59, End: 60}, {Start: 25, End: 60, Step: 7},
			} {
				wantIdx, wantPx := readAll(t, src, o)
				seek := o
				seek.Timing = timing
				runs = nil
				gotIdx, gotPx := readAll(t, src, seek)
				if !slices.Equal(gotIdx, wantIdx) {
					t.Fatalf("%+v: seeking gave frames %v, decoding from 0 %v", o, gotIdx, wantIdx)
				}
				for i := range wantPx {
					if !bytes.Equal(gotPx[i], wantPx[i]) {
						t.Fatalf("%+v: frame %d's pixels differ when seeking", o, wantIdx[i])
					}
				}
				if len(runs) != 1 || !seeks(runs[0]) {
					t.Fatalf("%+v: ffmpeg ran with %v, want -ss before -i", o, runs)
				}
			}
		})
	}
}

// seeks reports whether ffmpeg's arguments seek the input (-ss before -i).
func seeks(args []string) bool {
	ss, in := slices.Index(args, "-ss"), slices.Index(args, "-i")
	return ss >= 0 && in > ss
}

// TestNoTimingNoSeek: without a timing (a variable or unknown rate) a read
// counts frames from 0, and a read from frame 0 never seeks.
func TestNoTimingNoSeek(t *testing.T) {
	src := clip(t, "n.mkv", 20, videotest.FFV1)
	var runs [][]string
	defer video.SetFFmpegArgsHook(func(a []string) { runs = append(runs, slices.Clone(a)) })()
	readAll(t, src, video.ReadOptions{Start: 7, End: 9})
	readAll(t, src, video.ReadOptions{Start: 0, End: 3, Timing: video.Timing{Rate: 25}})
	for _, a := range runs {
		if seeks(a) {
			t.Fatalf("seeked: %v", a)
		}
	}
}

// TestParseTiming: only a constant declared rate and known start times
// give a timing.
func TestParseTiming(t *testing.T) {
	for name, c := range map[string]struct {
		json string
		want video.Timing
	}{
		"constant":              {`{"streams":[{"r_frame_rate":"25/1","avg_frame_rate":"25/1","start_time":"0.000000"}],"format":{"format_name":"matroska,webm","start_time":"0.000000"}}`, video.Timing{Rate: 25}},
		"ntsc":                  {`{"streams":[{"r_frame_rate":"30000/1001","avg_frame_rate":"30000/1001","start_time":"0.100000"}],"format":{"format_name":"matroska,webm","start_time":"0.000000"}}`, video.Timing{Rate: 30000.0 / 1001, Offset: 0.1}},
		"variable":              {`{"streams":[{"r_frame_rate":"30/1","avg_frame_rate":"2997/100","start_time":"0"}],"format":{"format_name":"matroska,webm","start_time":"0"}}`, video.Timing{}},
		"no average":            {`{"streams":[{"r_frame_rate":"25/1","avg_frame_rate":"0/0","start_time":"0"}],"format":{"format_name":"matroska,webm","start_time":"0"}}`, video.Timing{}},
		"no start":              {`{"streams":[{"r_frame_rate":"25/1","avg_frame_rate":"25/1","start_time":"N/A"}],"format":{"format_name":"matroska,webm","start_time":"0"}}`, video.Timing{}},
		"cover art first":       {`{"streams":[{"r_frame_rate":"90000/1","avg_frame_rate":"0/0","disposition":{"attached_pic":1}},{"r_frame_rate":"24/1","avg_frame_rate":"24/1","start_time":"0"}],"format":{"format_name":"matroska,webm","start_time":"0"}}`, video.Timing{Rate: 24}},
		"mpegts (not indexed)":  {`{"streams":[{"r_frame_rate":"25/1","avg_frame_rate":"25/1","start_time":"1.4"}],"format":{"format_name":"mpegts","start_time":"1.4"}}`, video.Timing{}},
		"avi (not indexed)":     {`{"streams":[{"r_frame_rate":"25/1","avg_frame_rate":"25/1","start_time":"0"}],"format":{"format_name":"avi","start_time":"0"}}`, video.Timing{}},
		"mp4":                   {`{"streams":[{"r_frame_rate":"25/1","avg_frame_rate":"25/1","start_time":"0"}],"format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","start_time":"0"}}`, video.Timing{Rate: 25}},
		"no format name":        {`{"streams":[{"r_frame_rate":"25/1","avg_frame_rate":"25/1","start_time":"0"}],"format":{"start_time":"0"}}`, video.Timing{}},
		"video before the file": {`{"streams":[{"r_frame_rate":"25/1","avg_frame_rate":"25/1","start_time":"0"}],"format":{"format_name":"matroska,webm","start_time":"1"}}`, video.Timing{}},
	} {
		got, err := video.ParseTiming([]byte(c.json))
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", name, got, err, c.want)
		}
	}
	if _, err := video.ParseTiming([]byte("{")); err == nil || !strings.Contains(err.Error(), "timing") {
		t.Errorf("garbage: %v", err)
	}
}

// BenchmarkLateStart reads 10 frames starting at frame 1400 of a 1500-frame
// 320x240 h264 clip (a keyframe every 48 frames), decoding from frame 0
// and seeking: go test -run '^$' -bench LateStart ./functions/internal/video
func BenchmarkLateStart(b *testing.B) {
	src := filepath.Join(b.TempDir(), "long.mp4")
	const bw, bh = 320, 240
	err := videotest.Encode(context.Background(), src, videotest.Options{Width: bw, Height: bh, FrameRate: 25, Frames: 1500,
		Codec: videotest.H264, Extra: []string{"-g", "48"}}, func(i int, g []byte) {
		for k := range g {
			g[k] = byte(i + k*3)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	timing, err := video.ProbeTiming(context.Background(), src)
	if err != nil || timing.Rate == 0 {
		b.Fatalf("timing %+v, %v", timing, err)
	}
	for name, tm := range map[string]video.Timing{"decode-from-0": {}, "seek": timing} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				n := 0
				err := video.ReadFrames(context.Background(), src, video.ReadOptions{Start: 1400, End: 1410, Timing: tm}, func(video.Frame) error { n++; return nil })
				if err != nil || n != 10 {
					b.Fatalf("%d frames, %v", n, err)
				}
			}
		})
	}
}

// TestProbeWithTiming: one ffprobe gives what Probe and ProbeTiming give
// apart, for indexed and unindexed containers, a video stream that starts
// after the file (an offset) and a rate that is not constant (no timing).
func TestProbeWithTiming(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	made := func(name string, args ...string) string {
		t.Helper()
		out := filepath.Join(dir, name)
		if msg, err := exec.Command("ffmpeg", append(append([]string{"-nostdin", "-v", "error"}, args...), out)...).CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, msg)
		}
		return out
	}
	vfr := made("vfr.mp4", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-frames:v", "30",
		"-vf", "setpts='if(lt(N,10),N,2*N)/(25*TB)'", "-vsync", "passthrough", "-c:v", "libx264", "-preset", "ultrafast")
	late := made("late.mkv", "-f", "lavfi", "-i", "sine=d=2", "-itsoffset", "0.4", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25:d=1.2",
		"-map", "0:a", "-map", "1:v", "-c:v", "ffv1", "-c:a", "flac")
	for name, c := range map[string]struct {
		src  string
		want video.Timing
	}{
		"h264 mp4":       {clip(t, "a.mp4", 20, videotest.H264), video.Timing{Rate: 25}},
		"ffv1 mkv":       {clip(t, "b.mkv", 20, videotest.FFV1), video.Timing{Rate: 25}},
		"h264 ts":        {clip(t, "c.ts", 20, videotest.H264), video.Timing{}},
		"video at 0.4 s": {late, video.Timing{Rate: 25, Offset: 0.4}},
		"variable rate":  {vfr, video.Timing{}},
	} {
		t.Run(name, func(t *testing.T) {
			info, err := video.Probe(ctx, c.src)
			if err != nil {
				t.Fatal(err)
			}
			timing, err := video.ProbeTiming(ctx, c.src)
			if err != nil || timing != c.want {
				t.Fatalf("ProbeTiming %+v %v, want %+v", timing, err, c.want)
			}
			gotInfo, gotTiming, err := video.ProbeWithTiming(ctx, c.src)
			if err != nil || gotInfo != info || gotTiming != timing {
				t.Fatalf("got %+v %+v %v, want %+v %+v", gotInfo, gotTiming, err, info, timing)
			}
		})
	}
	if _, _, err := video.ProbeWithTiming(ctx, filepath.Join(dir, "none.mp4")); err == nil {
		t.Fatal("a missing file probed")
	}
}

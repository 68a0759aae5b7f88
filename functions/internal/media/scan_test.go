package media

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/functions/internal/video"
)

const scanHead = "stream|codec_name=h264|profile=High|width=320|height=240|sample_aspect_ratio=1:1|pix_fmt=yuv420p|field_order=progressive|time_base=1/15360\n" +
	"format|format_name=mov,mp4,m4a,3gp,3g2,mj2|start_time=0.000000\n"

// gopPackets writes the packets of frames frames in decode order with a
// keyframe every g and one B-frame between references (display order
// I P B P B ...: each P is sent before the B shown before it).
func gopPackets(frames, g int) string {
	var b strings.Builder
	for start := 0; start < frames; start += g {
		end := min(start+g, frames)
		order := []int{start}
		for f := start + 1; f < end; f += 2 {
			if f+1 < end {
				order = append(order, f+1, f)
			} else {
				order = append(order, f)
			}
		}
		for _, f := range order {
			flags := "__"
			if f == start {
				flags = "K_"
			}
			fmt.Fprintf(&b, "packet|pts=%d|flags=%s|size=%d|data_hash=adler32:%08x\n", 512*f, flags, 100+f, f)
		}
	}
	return b.String()
}

func TestParseScanAndPlan(t *testing.T) {
	st, pkts, err := parseScan(scanHead + gopPackets(100, 30))
	if err != nil {
		t.Fatal(err)
	}
	plan, reason := planCopy(st, pkts, 0, [2]int{1, 1})
	if plan == nil || plan.GOP != 30 || plan.Frames != 100 || plan.Step != 1.0/30 || len(plan.chunkSums(3)) != 10 || plan.chunkSums(1)[0] != (packetSum{size: 130, adler: 30, ok: true}) {
		t.Fatalf("%+v %s", plan, reason)
	}
	for _, c := range []struct {
		name, data, why string
		rotation        int
	}{
		{"irregular", scanHead + strings.Replace(gopPackets(100, 30), "pts=23040|flags=__", "pts=23040|flags=K_", 1), "not every 30", 0},
		{"open GOP", scanHead + strings.Replace(strings.Replace(gopPackets(100, 30), "pts=14848|", "pts=15872|", 1), "pts=15360|flags=K_", "pts=14848|flags=K_", 1), "not closed", 0},
		{"variable rate", scanHead + strings.Replace(gopPackets(100, 30), "pts=25600|", "pts=25500|", 1), "not constant", 0},
		{"discarded", scanHead + strings.Replace(gopPackets(100, 30), "flags=K_", "flags=KD", 1), "edit list", 0},
		{"long GOP", scanHead + gopPackets(300, 150), "interval 150", 0},
		{"rotated", scanHead + gopPackets(100, 30), "rotated", 90},
		{"hevc", strings.Replace(scanHead, "h264", "hevc", 1) + gopPackets(10, 5), "hevc", 0},
		{"odd size", strings.Replace(scanHead, "width=320", "width=321", 1) + gopPackets(10, 5), "even", 0},
		{"High 10", strings.Replace(scanHead, "profile=High", "profile=High 10", 1) + gopPackets(10, 5), "profile", 0},
		{"interlaced", strings.Replace(scanHead, "progressive", "tt", 1) + gopPackets(10, 5), "interlaced", 0},
		{"AVI", strings.Replace(scanHead, "mov,mp4,m4a,3gp,3g2,mj2", "avi", 1) + gopPackets(10, 5), "container", 0},
		{"no packets", scanHead, "no packets", 0},
		{"no checksum", scanHead + "packet|pts=0|flags=K_|size=3\n", "checksum", 0},
		{"bad checksum", scanHead + "packet|pts=0|flags=K_|size=3|data_hash=CRC32:00000001\n", "checksum", 0},
	} {
		st, pkts, err := parseScan(c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if plan, reason := planCopy(st, pkts, c.rotation, [2]int{1, 1}); plan != nil || !strings.Contains(reason, c.why) {
			t.Errorf("%s: %+v %q, want a reason with %q", c.name, plan, reason, c.why)
		}
	}
	for _, bad := range []string{
		"", "garbage\n", scanHead + scanHead, scanHead + "packet|pts=N/A|flags=K_\n", scanHead + "packet|pts=0|flags=K\n",
		strings.Replace(scanHead, "1/15360", "0/0", 1), strings.Replace(scanHead, "time_base=1/15360", "", 1), "frame|pts=0\n" + scanHead,
	} {
		if _, _, err := parseScan(bad); err == nil {
			t.Errorf("%.60q accepted", bad)
		}
	}
	// A packet's side data continues its line (MPEG-TS).
	st, pkts, err = parseScan(scanHead + "packet|pts=0|flags=K_|size=7|side_data|\n|data_hash=adler32:00000001\n")
	if err != nil || len(pkts) != 1 || pkts[0].sum != (packetSum{size: 7, adler: 1, ok: true}) || st.start != 0 {
		t.Fatalf("%+v %v", pkts, err)
	}
}

// TestParseFrameCRC: framecrc's Adler-32 (from 0) becomes ffprobe's
// (zlib's, from 1): a packet of 131,790 bytes that framecrc hashed
// 0xd54e9046 and ffprobe adler32:d83a9047 (both measured on one packet).
func TestParseFrameCRC(t *testing.T) {
	got, err := parseFrameCRC("#tb 0: 1/15360\n#stream#, dts, pts, duration, size, hash\n0,      -2048,          0,     1024,   131790, 0xd54e9046\n0, -1024, 4096, 1024, 13049, 0x0a065bff, F=0x0\n")
	if err != nil || len(got) != 2 || got[0] != (packetSum{size: 131790, adler: 0xd83a9047, ok: true}) {
		t.Fatalf("%+v %v", got, err)
	}
	for _, bad := range []string{"0, 0, 0, 1, 472\n", "0, 0, 0, 1, x, 0x00000000\n", "0, 0, 0, 1, 4, 00000000\n", "0, 0, 0, 1, 4, 0x0000000g\n", "0, 0, 0, 1, -4, 0x00000000\n"} {
		if _, err := parseFrameCRC(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestKeyFrameSizes: a remux needs every decoded keyframe at the plan's
// size; the scan's frame lines (with their side data lines, and
// interleaved with the packets as ffprobe prints them) are read, and a
// frame line without a size is refused.
func TestKeyFrameSizes(t *testing.T) {
	plan := &CopyPlan{GOP: 10, Width: 320, Height: 240}
	const keys = "frame|width=320|height=240|side_data|\nside_data|\n\nframe|width=320|height=240\n"
	for _, c := range []struct{ data, why string }{
		{keys, ""},
		{keys + "frame|width=640|height=480\n", "the frame size changes from 320x240 to 640x480"},
		{"", "no keyframe was decoded"},
		{gopPackets(3, 10) + "frame|width=320|height=240\n" + gopPackets(3, 10), ""},
	} {
		st, _, err := parseScan(scanHead + c.data)
		if err != nil {
			t.Fatalf("%q: %v", c.data, err)
		}
		if got := sizeChange(plan, st.keySizes); got != c.why {
			t.Errorf("%q: %q, want %q", c.data, got, c.why)
		}
	}
	for _, bad := range []string{"frame|width=0|height=2\n", "frame|width=2\n", "frame|pts=0\n", "garbage\n", "frame|width=1e3|height=2\n"} {
		if _, _, err := parseScan(scanHead + bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseScan(f *testing.F) {
	f.Add(scanHead + gopPackets(40, 10))
	f.Add(scanHead + "packet|pts=0|flags=K_|size=9|side_data|\n|data_hash=adler32:00000001\n")
	f.Add(strings.Replace(scanHead, "1/15360", "1/0", 1) + gopPackets(3, 1))
	f.Add(scanHead + gopPackets(20, 10) + "frame|width=320|height=240|side_data|\nside_data|\n\nframe|width=320|height=240\n")
	f.Add(scanHead + "frame|width=96|height=64\nframe|width=128|height=96\nframe|width=-1|height=2\n|x=1\n")
	f.Fuzz(func(t *testing.T, data string) {
		st, pkts, err := parseScan(data)
		if err != nil {
			return
		}
		for _, sz := range st.keySizes {
			if sz[0] <= 0 || sz[1] <= 0 {
				t.Fatalf("keyframe size %v from %q", sz, data)
			}
		}
		if why := sizeChange(&CopyPlan{GOP: 1, Width: 2, Height: 2}, st.keySizes); why == "" {
			if len(st.keySizes) == 0 {
				t.Fatal("a remux with no keyframe decoded")
			}
			for _, sz := range st.keySizes {
				if sz != [2]int{2, 2} {
					t.Fatalf("a remux of 2x2 with a keyframe of %v", sz)
				}
			}
		}
		plan, reason := planCopy(st, pkts, 0, [2]int{1, 1})
		if plan == nil {
			if reason == "" {
				t.Fatal("refused without a reason")
			}
			return
		}
		if plan.GOP < 1 || plan.GOP > MaxCopyGOP || plan.Frames != len(pkts) || !(plan.Step > 0) {
			t.Fatalf("plan %+v from %d packets", plan, len(pkts))
		}
		n := 0
		for k := 0; k*plan.GOP < plan.Frames; k++ {
			n += len(plan.chunkSums(k))
		}
		if n != plan.Frames {
			t.Fatalf("chunks hold %d of %d packets", n, plan.Frames)
		}
	})
}

func FuzzParseFrameCRC(f *testing.F) {
	f.Add("#tb 0: 1/15360\n0,      -2048,          0,     1024,   131790, 0xd54e9046\n")
	f.Add("0, 0, 0, 1, 472, 0xfc48172d, F=0x0, S=1, 8, 0x00000001\n")
	f.Fuzz(func(t *testing.T, data string) {
		got, err := parseFrameCRC(data)
		if err != nil {
			return
		}
		if len(got) > strings.Count(data, "\n")+1 {
			t.Fatalf("%d packets from %d lines", len(got), strings.Count(data, "\n")+1)
		}
		for _, p := range got {
			if p.size < 0 || p.adler&0xffff >= 65521 || p.adler>>16 >= 65521 || !p.ok {
				t.Fatalf("%+v", p)
			}
		}
	})
}

// TestUnprovenChunkIsEncoded: a remuxed chunk whose packets are not the
// ones the plan read (here: the plan is told a wrong CRC for a packet of
// chunk 1) is not stored; the range encodes from it, in chunks of the same
// size, and the movie is whole.
func TestUnprovenChunkIsEncoded(t *testing.T) {
	src := filepath.Join(t.TempDir(), "camera.mp4")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25", "-frames:v", "100",
		"-c:v", "libx264", "-preset", "veryfast", "-bf", "3", "-g", "30", "-keyint_min", "30", "-sc_threshold", "0", "-pix_fmt", "yuv420p", src).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	ctx := context.Background()
	info, err := video.Probe(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	plan := PlanRendition(ctx, src, info, 0)
	if plan.Copy == nil || plan.ChunkFrames != 30 {
		t.Fatalf("%+v %s", plan, plan.Reason)
	}
	plan.Copy.sums[35].adler ^= 1
	var stored []int
	res, err := PrepareRange(ctx, src, plan, PrepareOptions{ExpectedFrames: info.FrameCount, FrameRate: info.FrameRate},
		func(_ context.Context, c Chunk) error {
			stored = append(stored, c.Index)
			return nil
		})
	if err != nil || !res.Done || res.NextFrame != 100 || res.Stored != 4 || res.Copied != 1 || fmt.Sprint(stored) != "[0 1 2 3]" {
		t.Fatalf("%+v %v, stored %v", res, err, stored)
	}
	// Prepare alone reports the rejection.
	_, err = Prepare(ctx, src, PrepareOptions{ChunkFrames: 30, FrameRate: info.FrameRate, ExpectedFrames: 100, Copy: plan.Copy},
		func(context.Context, Chunk) error { return nil })
	if !errors.Is(err, ErrCopyRejected) {
		t.Fatalf("%v", err)
	}
}

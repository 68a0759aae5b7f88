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

// scanHead is the probe's streams and format (stream 0: H.264 320x240),
// scanDoc a whole probe output with these entries (packets and frames,
// JSON objects separated by commas).
const scanHead = `"streams":[{"index":0,"codec_type":"video","codec_name":"h264","profile":"High","width":320,"height":240,"sample_aspect_ratio":"1:1","pix_fmt":"yuv420p","field_order":"progressive","time_base":"1/15360"}],` +
	`"format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","start_time":"0.000000"}`

func scanDoc(head, entries string) []byte {
	return []byte(`{"packets_and_frames":[` + strings.TrimSuffix(entries, ",") + `],` + head + `}`)
}

// gopPackets writes the packets of frames frames in decode order with a
// keyframe every g and one B-frame between references (display order
// I P B P B ...: each P is sent before the B shown before it), each
// followed by a comma.
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
			fmt.Fprintf(&b, `{"type":"packet","stream_index":0,"pts":%d,"flags":"%s","size":"%d","data_hash":"adler32:%08x"},`, 512*f, flags, 100+f, f)
		}
	}
	return b.String()
}

func TestParseScanAndPlan(t *testing.T) {
	st, pkts, err := parseScan(scanDoc(scanHead, gopPackets(100, 30)), 0)
	if err != nil {
		t.Fatal(err)
	}
	plan, reason := planCopy(st, pkts, 0, [2]int{1, 1})
	if plan == nil || plan.GOP != 30 || plan.Frames != 100 || plan.Step != 1.0/30 || len(plan.chunkSums(3)) != 10 || plan.chunkSums(1)[0] != (packetSum{size: 130, adler: 30, ok: true}) {
		t.Fatalf("%+v %s", plan, reason)
	}
	pkt := func(fields string) string { return `{"type":"packet","stream_index":0,` + fields + `},` }
	for _, c := range []struct {
		name, head, entries, why string
		rotation                 int
	}{
		{"irregular", scanHead, strings.Replace(gopPackets(100, 30), `"pts":23040,"flags":"__"`, `"pts":23040,"flags":"K_"`, 1), "not every 30", 0},
		{"open GOP", scanHead, strings.Replace(strings.Replace(gopPackets(100, 30), `"pts":14848,`, `"pts":15872,`, 1), `"pts":15360,"flags":"K_"`, `"pts":14848,"flags":"K_"`, 1), "not closed", 0},
		{"variable rate", scanHead, strings.Replace(gopPackets(100, 30), `"pts":25600,`, `"pts":25500,`, 1), "not constant", 0},
		{"discarded", scanHead, strings.Replace(gopPackets(100, 30), `"flags":"K_"`, `"flags":"KD"`, 1), "edit list", 0},
		{"long GOP", scanHead, gopPackets(300, 150), "interval 150", 0},
		{"rotated", scanHead, gopPackets(100, 30), "rotated", 90},
		{"hevc", strings.Replace(scanHead, "h264", "hevc", 1), gopPackets(10, 5), "hevc", 0},
		{"odd size", strings.Replace(scanHead, `"width":320`, `"width":321`, 1), gopPackets(10, 5), "even", 0},
		{"High 10", strings.Replace(scanHead, `"profile":"High"`, `"profile":"High 10"`, 1), gopPackets(10, 5), "profile", 0},
		{"interlaced", strings.Replace(scanHead, "progressive", "tt", 1), gopPackets(10, 5), "interlaced", 0},
		{"AVI", strings.Replace(scanHead, "mov,mp4,m4a,3gp,3g2,mj2", "avi", 1), gopPackets(10, 5), "container", 0},
		{"no packets", scanHead, "", "no packets", 0},
		{"no checksum", scanHead, pkt(`"pts":0,"flags":"K_","size":"3"`), "checksum", 0},
		{"bad checksum", scanHead, pkt(`"pts":0,"flags":"K_","size":"3","data_hash":"CRC32:00000001"`), "checksum", 0},
	} {
		st, pkts, err := parseScan(scanDoc(c.head, c.entries), 0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if plan, reason := planCopy(st, pkts, c.rotation, [2]int{1, 1}); plan != nil || !strings.Contains(reason, c.why) {
			t.Errorf("%s: %+v %q, want a reason with %q", c.name, plan, reason, c.why)
		}
	}
	for _, bad := range [][]byte{
		nil, []byte("garbage\n"), []byte(`{"packets_and_frames":[],"streams":[]}`),
		scanDoc(scanHead, pkt(`"flags":"K_"`)), scanDoc(scanHead, pkt(`"pts":0,"flags":"K"`)), scanDoc(scanHead, pkt(`"pts":"N/A","flags":"K_"`)),
		scanDoc(strings.Replace(scanHead, "1/15360", "0/0", 1), ""), scanDoc(strings.Replace(scanHead, `"time_base":"1/15360"`, `"tb":"1"`, 1), ""),
		scanDoc(scanHead, `{"type":"side_data","stream_index":0},`), scanDoc(strings.Replace(scanHead, `"index":0`, `"index":1`, 1), gopPackets(10, 5)),
		scanDoc(strings.Replace(scanHead, `"streams":[`, `"streams":[{"index":1,"codec_name":"png","time_base":"1/90000"},`, 1), gopPackets(10, 5)),
	} {
		if _, _, err := parseScan(bad, 0); err == nil {
			t.Errorf("%.60q accepted", bad)
		}
	}
	// A packet's side data is skipped; so are another stream's packets
	// and frames (a cover picture's).
	other := `{"type":"packet","stream_index":1,"pts":0,"flags":"K_","size":"5","data_hash":"adler32:00000002"},{"type":"frame","stream_index":1,"width":600,"height":600},`
	st, pkts, err = parseScan(scanDoc(scanHead, other+pkt(`"pts":0,"flags":"K_","size":"7","side_data_list":[{"side_data_type":"MPEGTS Stream ID"}],"data_hash":"adler32:00000001"`)+other), 0)
	if err != nil || len(pkts) != 1 || pkts[0].sum != (packetSum{size: 7, adler: 1, ok: true}) || st.start != 0 || len(st.keySizes) != 0 {
		t.Fatalf("%+v %+v %v", st, pkts, err)
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
// size; the probe's frame entries (interleaved with the packets as ffprobe
// prints them, with their side data) are read, and a frame without a size
// is refused.
func TestKeyFrameSizes(t *testing.T) {
	plan := &CopyPlan{GOP: 10, Width: 320, Height: 240}
	frame := func(w, h int) string {
		return fmt.Sprintf(`{"type":"frame","stream_index":0,"width":%d,"height":%d,"side_data_list":[{"side_data_type":"H.26[45] User Data Unregistered SEI message"}]},`, w, h)
	}
	for _, c := range []struct{ entries, why string }{
		{frame(320, 240) + frame(320, 240), ""},
		{frame(320, 240) + frame(640, 480), "the frame size changes from 320x240 to 640x480"},
		{"", "no keyframe was decoded"},
		{gopPackets(3, 10) + frame(320, 240) + gopPackets(3, 10), ""},
	} {
		st, _, err := parseScan(scanDoc(scanHead, c.entries), 0)
		if err != nil {
			t.Fatalf("%q: %v", c.entries, err)
		}
		if got := sizeChange(plan, st.keySizes); got != c.why {
			t.Errorf("%q: %q, want %q", c.entries, got, c.why)
		}
	}
	for _, bad := range []string{`{"type":"frame","stream_index":0,"width":0,"height":2},`, `{"type":"frame","stream_index":0,"width":2},`,
		`{"type":"frame","stream_index":0,"width":"2","height":2},`, `{"type":"frame","stream_index":0,"width":1e3,"height":2},`} {
		if _, _, err := parseScan(scanDoc(scanHead, bad), 0); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseScan(f *testing.F) {
	f.Add(scanDoc(scanHead, gopPackets(40, 10)))
	f.Add(scanDoc(scanHead, `{"type":"packet","stream_index":0,"pts":0,"flags":"K_","size":"9","side_data_list":[{}],"data_hash":"adler32:00000001"}`))
	f.Add(scanDoc(strings.Replace(scanHead, "1/15360", "1/0", 1), gopPackets(3, 1)))
	f.Add(scanDoc(scanHead, gopPackets(20, 10)+`{"type":"frame","stream_index":0,"width":320,"height":240},{"type":"frame","stream_index":1,"width":-1,"height":2}`))
	f.Add(scanDoc(scanHead, `{"type":"frame","stream_index":0,"width":96,"height":64},{"type":"frame","stream_index":0,"width":128,"height":96}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, pkts, err := parseScan(data, 0)
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

package media

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/video"
)

// testDecisions are a remux's decision (every packet's checksum) and an
// encoding's.
func testDecisions(t testing.TB) []Decision {
	st, pkts, err := parseScan(scanDoc(scanHead, gopPackets(40, 10)), 0)
	if err != nil {
		t.Fatal(err)
	}
	p, why := planCopy(st, pkts, 0, [2]int{1, 1})
	if p == nil {
		t.Fatal(why)
	}
	info := video.Info{FrameCount: 40, FrameRate: 30, Width: 320, Height: 240, Duration: 1333 * time.Millisecond, Codec: "h264", SampleAspect: [2]int{1, 1}}
	return []Decision{
		{Info: info, Timing: video.Timing{Rate: 30, Offset: 0.5}, Plan: Plan{Copy: p, ChunkFrames: 10}},
		{Info: video.Info{FrameCount: 7, FrameRate: 0.5, Width: 9, Height: 5, Codec: "cinepak", Rotation: 90}, Plan: Plan{ChunkFrames: 60, Reason: "the codec is cinepak, not h264"}},
	}
}

// A decision read back is the decision written, the remux's checksums
// included; the same decision is the same bytes (a range that decides
// again writes what the first wrote).
func TestDecisionRoundTrip(t *testing.T) {
	for _, d := range testDecisions(t) {
		b, err := EncodeDecision(d)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := EncodeDecision(d)
		if !bytes.Equal(b, again) {
			t.Fatal("one decision, two records")
		}
		got, err := ParseDecision(b)
		if err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		if !reflect.DeepEqual(got, d) {
			t.Fatalf("read back %+v, wrote %+v", got, d)
		}
	}
}

// Garbage, a record of another version and records whose fields a range
// cannot prepare from are refused.
func TestDecisionGarbage(t *testing.T) {
	good, err := EncodeDecision(testDecisions(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseDecision(bytes.Replace(good, []byte(`"version":1`), []byte(`"version":2`), 1)); !errors.Is(err, ErrDecisionVersion) {
		t.Fatalf("another version: %v", err)
	}
	for _, bad := range []string{"", "null", "{}", "[1]", "\x00\xff", `{"version":1}`,
		strings.Replace(string(good), `"FrameCount":40`, `"FrameCount":41`, 1),
		strings.Replace(string(good), `"gop":10`, `"gop":0`, 1),
		strings.Replace(string(good), `"chunkFrames":10`, `"chunkFrames":20`, 1),
		strings.Replace(string(good), `"step":`, `"step":-`, 1),
		strings.Replace(string(good), `"FrameRate":30`, `"FrameRate":1e9`, 1),
		strings.Replace(string(good), `"Rotation":0`, `"Rotation":-90`, 1),
		strings.Replace(string(good), `"sums":"`, `"sums":"AAAA`, 1),
		string(good[:len(good)/2]),
	} {
		if bad == string(good) {
			t.Fatalf("the garbage case did not change the record: %s", good)
		}
		if d, err := ParseDecision([]byte(bad)); err == nil {
			t.Fatalf("accepted %.200q: %+v", bad, d)
		}
	}
}

func FuzzParseDecision(f *testing.F) {
	for _, d := range testDecisions(f) {
		b, err := EncodeDecision(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":1,"copy":{"gop":1,"frames":1,"sums":"AAAAAQAAAAE="}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDecision(data)
		if err != nil {
			return
		}
		if d.Info.FrameCount < 1 || d.Plan.ChunkFrames < 1 || d.Info.Width < 1 || !(d.Info.FrameRate > 0) {
			t.Fatalf("accepted %+v", d)
		}
		if p := d.Plan.Copy; p != nil {
			n := 0
			for k := 0; k*p.GOP < p.Frames; k++ {
				n += len(p.chunkSums(k))
			}
			if n != p.Frames || p.GOP != d.Plan.ChunkFrames || !(p.Step > 0) {
				t.Fatalf("remux %+v: %d packets in its chunks", p, n)
			}
		}
		b, err := EncodeDecision(d)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := ParseDecision(b); err != nil || !reflect.DeepEqual(again, d) {
			t.Fatalf("%+v read back as %+v (%v)", d, again, err)
		}
	})
}

package media

import (
	"strings"
	"testing"
)

func TestParseSegmentList(t *testing.T) {
	got, err := parseSegmentList("c000000003.mp4,0.000000,2.000000\nc000000004.mp4,2.0,4.0\nc000000005.mp4,4.0")
	if err != nil || len(got) != 2 || got[0] != 3 || got[1] != 4 {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"x.mp4,0,1\n", "c12.mp4,0,1\n", "c-00000001.mp4,0,1\n", "c00000000a.mp4\n"} {
		if _, err := parseSegmentList(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseSegmentList(f *testing.F) {
	f.Add("c000000000.mp4,0.000000,6.200000\nc000000001.mp4,6.2,12.2\n")
	f.Add("c999999999.mp4\n\n")
	f.Fuzz(func(t *testing.T, data string) {
		got, err := parseSegmentList(data)
		if err != nil {
			return
		}
		if len(got) > strings.Count(data, "\n") {
			t.Fatalf("%d entries from %d lines", len(got), strings.Count(data, "\n"))
		}
		for _, k := range got {
			if k < 0 {
				t.Fatalf("negative chunk %d", k)
			}
		}
	})
}

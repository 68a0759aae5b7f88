package main

import (
	"os"
	"testing"
)

// parserCase is a /proc text and what a parser of it must return.
type parserCase[R comparable] struct {
	name, in string
	want     R
}

// checkParser runs parse on each case's text.
func checkParser[R comparable](t *testing.T, parse func([]byte) R, cases []parserCase[R]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := parse([]byte(c.in)); got != c.want {
				t.Errorf("%q: got %+v, want %+v", c.in, got, c.want)
			}
		})
	}
}

type statusOut struct {
	hwm, rss int64
	found    bool
}

type parentOut struct {
	comm string
	ppid int
	ok   bool
}

func TestProcStatus(t *testing.T) {
	checkParser(t, func(b []byte) statusOut { h, r, ok := procStatus(b); return statusOut{h, r, ok} }, []parserCase[statusOut]{
		{"a live process", "Name:\tffmpeg\nVmPeak:\t  900 kB\nVmHWM:\t  123456 kB\nVmRSS:\t  100000 kB\nThreads:\t3\n", statusOut{123456, 100000, true}},
		{"a zombie has no Vm lines", "Name:\tffmpeg\nState:\tZ (zombie)\n", statusOut{}},
		{"empty", "", statusOut{}},
		{"garbage", "\x00\xff:::\nVmRSS:\n:VmHWM\n", statusOut{}},
		{"not kB", "VmRSS:\t12 MB\n", statusOut{}},
		{"negative", "VmRSS:\t-12 kB\n", statusOut{}},
		{"overflow", "VmRSS:\t99999999999999999999999 kB\n", statusOut{}},
		{"no newline at the end", "VmRSS:\t7 kB", statusOut{0, 7, true}},
	})
}

func TestProcParent(t *testing.T) {
	checkParser(t, func(b []byte) parentOut { c, p, ok := procParent(b); return parentOut{c, p, ok} }, []parserCase[parentOut]{
		{"ffmpeg", "4242 (ffmpeg) S 4000 4242 4000 0 -1", parentOut{"ffmpeg", 4000, true}},
		{"a name with spaces and parentheses", "17 (a (b) c) R 1 17 17", parentOut{"a (b) c", 1, true}},
		{"empty", "", parentOut{}},
		{"no closing parenthesis", "17 (ffmpeg S 1", parentOut{}},
		{"closing before opening", "17 )x( S 1", parentOut{}},
		{"no ppid", "17 (x) S", parentOut{}},
		{"ppid not a number", "17 (x) S q", parentOut{}},
		{"negative ppid", "17 (x) S -3", parentOut{}},
		{"garbage", "\xff\x00(\x01)\x02 \x03 \x04", parentOut{}},
	})
}

// The sampler finds this test's own status (a child would be found the
// same way) and the bytes under a directory.
func TestSamplerReadsProcAndTmp(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/a", make([]byte, 3000), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &sampler{tmp: dir}
	s.sample()
	p := s.take()
	if p.tmpBytes != 3000 || p.selfRSS <= 0 {
		t.Errorf("peaks %+v", p)
	}
	if again := s.take(); again != (peaks{}) {
		t.Errorf("take did not start again: %+v", again)
	}
}

func FuzzProcFiles(f *testing.F) {
	f.Add([]byte("VmHWM:\t1 kB\nVmRSS:\t2 kB\n"))
	f.Add([]byte("1 (x) S 2 3"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if hwm, rss, ok := procStatus(data); !ok && (hwm != 0 || rss != 0) || hwm < 0 || rss < 0 {
			t.Errorf("procStatus = %d %d %v", hwm, rss, ok)
		}
		if _, ppid, ok := procParent(data); ppid < 0 || !ok && ppid != 0 {
			t.Errorf("procParent ppid %d %v", ppid, ok)
		}
	})
}

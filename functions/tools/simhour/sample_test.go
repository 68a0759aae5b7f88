package main

import (
	"os"
	"testing"
)

func TestProcStatus(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		hwm, rss  int64
		wantFound bool
	}{
		{"a live process", "Name:\tffmpeg\nVmPeak:\t  900 kB\nVmHWM:\t  123456 kB\nVmRSS:\t  100000 kB\nThreads:\t3\n", 123456, 100000, true},
		{"a zombie has no Vm lines", "Name:\tffmpeg\nState:\tZ (zombie)\n", 0, 0, false},
		{"empty", "", 0, 0, false},
		{"garbage", "\x00\xff:::\nVmRSS:\n:VmHWM\n", 0, 0, false},
		{"not kB", "VmRSS:\t12 MB\n", 0, 0, false},
		{"negative", "VmRSS:\t-12 kB\n", 0, 0, false},
		{"overflow", "VmRSS:\t99999999999999999999999 kB\n", 0, 0, false},
		{"no newline at the end", "VmRSS:\t7 kB", 0, 7, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hwm, rss, ok := procStatus([]byte(tt.in))
			if hwm != tt.hwm || rss != tt.rss || ok != tt.wantFound {
				t.Errorf("procStatus = %d %d %v, want %d %d %v", hwm, rss, ok, tt.hwm, tt.rss, tt.wantFound)
			}
		})
	}
}

func TestProcParent(t *testing.T) {
	tests := []struct {
		name, in string
		comm     string
		ppid     int
		ok       bool
	}{
		{"ffmpeg", "4242 (ffmpeg) S 4000 4242 4000 0 -1", "ffmpeg", 4000, true},
		{"a name with spaces and parentheses", "17 (a (b) c) R 1 17 17", "a (b) c", 1, true},
		{"empty", "", "", 0, false},
		{"no closing parenthesis", "17 (ffmpeg S 1", "", 0, false},
		{"closing before opening", "17 )x( S 1", "", 0, false},
		{"no ppid", "17 (x) S", "", 0, false},
		{"ppid not a number", "17 (x) S q", "", 0, false},
		{"negative ppid", "17 (x) S -3", "", 0, false},
		{"garbage", "\xff\x00(\x01)\x02 \x03 \x04", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			comm, ppid, ok := procParent([]byte(tt.in))
			if comm != tt.comm || ppid != tt.ppid || ok != tt.ok {
				t.Errorf("procParent = %q %d %v, want %q %d %v", comm, ppid, ok, tt.comm, tt.ppid, tt.ok)
			}
		})
	}
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

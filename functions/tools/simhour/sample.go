package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The sampler polls, every tick, what the ingest holds while it runs:
// the resident memory of this process's child processes (ffmpeg,
// ffprobe) from /proc, and the bytes under the ingest's temporary
// directory (TMPDIR, set for the stack: media.Prepare's chunk directory).
// Sampling misses a peak shorter than a tick; VmHWM, a process's own
// peak, is read from each child while it lives, and getrusage's ru_maxrss
// of the children (exact, but over the whole run) is reported beside it.

// procStatus reads VmHWM and VmRSS (kB) from a /proc/<pid>/status text.
// ok is false when neither is there (a zombie, or not a status file).
func procStatus(data []byte) (hwmKB, rssKB int64, ok bool) {
	for line := range bytes.Lines(data) {
		k, v, found := bytes.Cut(line, []byte(":"))
		if !found {
			continue
		}
		var dst *int64
		switch string(k) {
		case "VmHWM":
			dst = &hwmKB
		case "VmRSS":
			dst = &rssKB
		default:
			continue
		}
		f := strings.Fields(string(v))
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 {
			continue
		}
		*dst, ok = n, true
	}
	return hwmKB, rssKB, ok
}

// procParent reads the parent pid and the command name from a
// /proc/<pid>/stat text ("pid (comm) state ppid ..."; comm may hold
// spaces and parentheses, so it ends at the last ')').
func procParent(data []byte) (comm string, ppid int, ok bool) {
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	f := strings.Fields(string(data[end+1:]))
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil || ppid < 0 {
		return "", 0, false
	}
	return string(data[open+1 : end]), ppid, true
}

// peaks are the largest values sampled since the last take.
type peaks struct {
	childHWM  int64 // the largest child's own peak RSS, bytes
	childSum  int64 // the children's RSS at one moment, summed, bytes
	total     int64 // childSum plus this process's RSS at that moment, bytes
	selfRSS   int64 // this process's RSS, bytes
	tmpBytes  int64 // bytes under the temporary directory
	childName string
}

type sampler struct {
	tmp string
	window[peaks]
}

func (s *sampler) run(stop <-chan struct{}, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.sample()
		}
	}
}

func (s *sampler) sample() {
	self := os.Getpid()
	var sum, hwm int64
	name := ""
	if ents, err := os.ReadDir("/proc"); err == nil {
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil {
				continue
			}
			comm, ppid, ok := procParent(stat)
			if !ok || ppid != self {
				continue
			}
			st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
			if err != nil {
				continue
			}
			h, r, ok := procStatus(st)
			if !ok {
				continue
			}
			sum += r << 10
			if h<<10 > hwm {
				hwm, name = h<<10, comm
			}
		}
	}
	var selfRSS int64
	if st, err := os.ReadFile("/proc/self/status"); err == nil {
		_, r, _ := procStatus(st)
		selfRSS = r << 10
	}
	tmp := dirBytes(s.tmp)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &s.cur
	if hwm > c.childHWM {
		c.childHWM, c.childName = hwm, name
	}
	c.childSum = max(c.childSum, sum)
	c.total = max(c.total, sum+selfRSS)
	c.selfRSS = max(c.selfRSS, selfRSS)
	c.tmpBytes = max(c.tmpBytes, tmp)
}

// dirBytes sums the sizes of the files under dir (files vanish while it
// walks: they are skipped).
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// window holds what was counted or sampled since the last take, under its
// mutex: the s3Counter's counts and the sampler's peaks.
type window[T any] struct {
	mu  sync.Mutex
	cur T
}

// take returns what was gathered since the last take and starts again.
func (w *window[T]) take() T {
	w.mu.Lock()
	defer w.mu.Unlock()
	v := w.cur
	var zero T
	w.cur = zero
	return v
}

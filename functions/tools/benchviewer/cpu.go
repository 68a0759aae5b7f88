package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpu is CPU time so far (user+system): this process (the API, the
// stack, chromedp), its ffmpeg children (ended ones from getrusage, running
// ones from /proc) and Chromium's processes (from /proc).
type cpu struct{ self, ffmpeg, chromium time.Duration }

func cpuNow() cpu {
	var c cpu
	var ru syscall.Rusage
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		c.self = tv(ru.Utime) + tv(ru.Stime)
	}
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		c.ffmpeg = tv(ru.Utime) + tv(ru.Stime) // ended children: ffmpeg and ffprobe (Chromium runs to the end)
	}
	parent := map[int]int{}
	type proc struct {
		comm string
		t    time.Duration
	}
	procs := map[int]proc{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		comm := string(b[bytes.IndexByte(b, '(')+1 : i])
		f := strings.Fields(string(b[i+1:])) // state ppid ... utime(12) stime(13)
		if len(f) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		parent[pid] = ppid
		procs[pid] = proc{comm, time.Duration(ut+st) * 10 * time.Millisecond} // USER_HZ 100
	}
	me := os.Getpid()
	for pid, p := range procs {
		if pid == me {
			continue
		}
		descendant := false
		for q, n := parent[pid], 0; q > 1 && n < 64; q, n = parent[q], n+1 {
			if q == me {
				descendant = true
				break
			}
		}
		switch {
		case !descendant:
		case p.comm == "ffmpeg" || p.comm == "ffprobe":
			c.ffmpeg += p.t
		default:
			c.chromium += p.t
		}
	}
	return c
}

// since prints the CPU used since b, per action.
func (c cpu) since(b cpu, actions int) {
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(max(actions, 1)) }
	fmt.Printf("bench-viewer:   CPU per action (user+system, load-independent): API and stack %.1f ms, ffmpeg %.1f ms, Chromium %.1f ms\n",
		per(c.self-b.self), per(c.ffmpeg-b.ffmpeg), per(c.chromium-b.chromium))
}

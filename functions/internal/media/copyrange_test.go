package media

import (
	"testing"
	"time"
)

// A window holds at most copyWindowBytes of packets, and one chunk at
// least, however large.
func TestWindowBytes(t *testing.T) {
	const mb = 1 << 20
	plan := func(sizes ...int) *CopyPlan {
		p := &CopyPlan{GOP: 2, Frames: len(sizes)}
		for _, s := range sizes {
			p.sums = append(p.sums, packetSum{size: s, ok: true})
		}
		return p
	}
	for _, c := range []struct {
		p        *CopyPlan
		k, most  int
		want     int
		describe string
	}{
		{plan(1, 1, 1, 1, 1, 1), 0, 16, 16, "small chunks: as many as asked"},
		{plan(1, 1, 1, 1, 1, 1), 1, 2, 2, "from chunk 1"},
		{plan(40*mb, 20*mb, 40*mb, 20*mb, 40*mb, 20*mb), 0, 16, 2, "60 MB chunks: two within 128 MiB"},
		{plan(40*mb, 20*mb, 40*mb, 30*mb, 1, 1), 0, 16, 1, "60 then 70 MB: one"},
		{plan(200*mb, 1, 1, 1), 0, 16, 1, "a chunk over the bound alone"},
		{plan(1, 1, 200*mb, 1), 0, 16, 1, "a large second chunk waits for the next window"},
		{plan(1, 1), 0, 0, 1, "at least one"},
	} {
		if got := c.p.window(c.k, c.most); got != c.want {
			t.Errorf("%s: %d chunks, want %d", c.describe, got, c.want)
		}
	}
}

// A window holds fewer chunks of larger frames (one decoder per chunk in
// its proof, each holding its frames), and before the range has timed a
// window, as many as the time left proves at the assumed pace; then at
// the measured pace.
func TestWindowSize(t *testing.T) {
	now := time.Now()
	plan := func(w, h, gop, frames int) *CopyPlan {
		p := &CopyPlan{GOP: gop, Width: w, Height: h, Frames: frames}
		for range frames {
			p.sums = append(p.sums, packetSum{size: 1000, ok: true})
		}
		return p
	}
	hd, uhd, pal := plan(1920, 1080, 60, 6000), plan(3840, 2160, 60, 6000), plan(768, 576, 30, 810)
	for _, c := range []struct {
		describe        string
		p               *CopyPlan
		k, chunks, room int
		deadline        time.Time
		pace            time.Duration
		want            int
	}{
		{"1080p, no deadline", hd, 0, 100, 0, time.Time{}, 0, 16},
		{"2160p: a quarter", uhd, 0, 100, 0, time.Time{}, 0, 4},
		{"768x576: every chunk of a 27-chunk movie", pal, 0, 27, 0, time.Time{}, 0, 27},
		{"the movie's last chunks", hd, 95, 100, 0, time.Time{}, 0, 5},
		{"the range's room", pal, 0, 27, 3, time.Time{}, 0, 3},
		{"600 s left, none timed", hd, 0, 100, 0, now.Add(600 * time.Second), 0, 16},
		{"5 s left, none timed: 1.24 s a 1080p chunk assumed", hd, 0, 100, 0, now.Add(5 * time.Second), 0, 4},
		{"5 s left at a measured 0.5 s", hd, 0, 100, 0, now.Add(5 * time.Second), 500 * time.Millisecond, 10},
		{"past the deadline: one", hd, 0, 100, 0, now.Add(-time.Second), 0, 1},
	} {
		if got := c.p.windowSize(c.k, c.chunks, c.room, c.deadline, c.pace, now); got != c.want {
			t.Errorf("%s: %d chunks, want %d", c.describe, got, c.want)
		}
	}
}

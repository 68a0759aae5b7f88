package media

import "testing"

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

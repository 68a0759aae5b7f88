package proof

import "sort"

// realTimeWrites: a write that returned before another was called has the
// lower version.
func (c *checker) realTimeWrites() {
	byEnd := append([]*Op(nil), c.writes...)
	sort.Slice(byEnd, func(i, j int) bool { return byEnd[i].End < byEnd[j].End })
	byStart := append([]*Op(nil), c.writes...)
	sort.Slice(byStart, func(i, j int) bool { return byStart[i].Start < byStart[j].Start })
	var maxDone *Op
	i := 0
	for _, w := range byStart {
		for i < len(byEnd) && byEnd[i].End < w.Start {
			if maxDone == nil || byEnd[i].Out.Movie.Version > maxDone.Out.Movie.Version {
				maxDone = byEnd[i]
			}
			i++
		}
		if maxDone != nil && maxDone.Out.Movie.Version >= w.Out.Movie.Version {
			c.fail(w, "committed version %d, yet op %d had already returned version %d before it was called",
				w.Out.Movie.Version, maxDone.ID, maxDone.Out.Movie.Version)
		}
	}
}

// reads: every read returns a committed row, no older than any write that
// returned before it was called and older than any write called after it
// returned.
func (c *checker) reads(reads []*Op) {
	for _, r := range reads {
		got := *r.Out.Movie
		committed, ok := c.states[got.Version]
		if !ok && c.missing[got.Version] {
			continue // written by a write whose outcome is unknown: nothing to compare with
		}
		if !ok || !SameMovie(committed, got) {
			c.fail(r, "read a row (version %d) that no write committed: %s", got.Version, DescribeMovie(got, c.h.Base))
			continue
		}
		for _, w := range c.writes {
			v := w.Out.Movie.Version
			if w.End < r.Start && v > got.Version {
				c.fail(r, "stale read: version %d, but op %d had returned version %d before the read", got.Version, w.ID, v)
				break
			}
			if w.Start > r.End && v <= got.Version {
				c.fail(r, "read version %d before op %d, called after the read returned, wrote it", got.Version, w.ID)
				break
			}
		}
	}
}

// frames: a fenced frame write lands only for a claimed job whose lease had
// not been replaced before the write was called, and only accepted writes
// are in the frames table.
func (c *checker) frames(frames []*Op) {
	landed := map[string]*Op{}
	for _, f := range frames {
		job := f.Call.Fence.JobID
		landed[f.Call.Token] = f
		claim := c.claims[job]
		if claim == nil {
			c.fail(f, "a frame landed for job %s, which was never claimed", short(job))
			continue
		}
		if f.End < claim.Start {
			c.fail(f, "a frame landed for job %s before its claim (op %d) was called", short(job), claim.ID)
		}
		if r := c.replaced[job]; r != nil && f.Start > r.End {
			c.fail(f, "a frame landed for job %s after op %d had replaced its lease and returned", short(job), r.ID)
		}
	}
	unknown := map[string]bool{}
	for i := range c.h.Ops {
		if op := &c.h.Ops[i]; op.Call.Kind == KindFrame && op.Out.Unknown {
			unknown[op.Call.Token] = true
		}
	}
	for _, s := range c.h.Frames {
		f := landed[s.Token]
		switch {
		case f == nil && !unknown[s.Token]:
			c.fail(nil, "frame %d of job %s is stored, but the write that stored it was refused (token %s)", s.Frame, short(s.JobID), short(s.Token))
		case f != nil && (f.Call.Fence.JobID != s.JobID || f.Call.Frame != s.Frame):
			c.fail(f, "stored as frame %d of job %s", s.Frame, short(s.JobID))
		}
	}
}

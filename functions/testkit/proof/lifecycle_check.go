package proof

import (
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// lifecycle is the checker's bookkeeping of creations and purges, which
// are not commands on a row (a conditional put, a conditional delete).
type lifecycle struct {
	creates        []*Op // accepted creations, by call time
	unknownCreates []*Op
	purges         []*Op // accepted purges
	unknownPurges  int
}

func (c *checker) unknownLifecycle(op *Op) {
	switch op.Call.Kind {
	case KindCreate:
		c.unknownCreates = append(c.unknownCreates, op)
	case KindPurge:
		c.unknownPurges++
	}
}

func (c *checker) acceptedLifecycle(op *Op) {
	switch op.Call.Kind {
	case KindCreate:
		c.creates = append(c.creates, op)
		c.stats.Creates++
	case KindPurge:
		if op.Out.Movie == nil {
			c.fail(op, "purged without the row it removed")
			return
		}
		c.purges = append(c.purges, op)
		c.stats.Purges++
	}
}

// lastVersion is the version of the last row: the final one, or the one
// the purge removed (or, after a purge whose answer was lost, the highest
// version written).
func (c *checker) lastVersion() int64 {
	switch {
	case !Absent(c.h.Final):
		return c.h.Final.Version
	case len(c.purges) > 0:
		return c.purges[0].Out.Movie.Version
	}
	var v int64
	if c.unknownPurges > 0 {
		for _, w := range c.writes {
			v = max(v, w.Out.Movie.Version)
		}
	}
	return v
}

// createdVersions is 1 when the history created its row: version 1 is the
// creation's, not a command's.
func (c *checker) createdVersions() int64 {
	if Absent(c.h.Initial) && len(c.creates)+len(c.unknownCreates) > 0 && c.lastVersion() >= 1 {
		return 1
	}
	return 0
}

// created is the row the writes start from: the initial row, or in a
// lifecycle history the creation's row. Every accepted creation must be
// that one creation or its replay (domain.CreateMovie.Replays): never two
// rows under one ID.
func (c *checker) created() domain.Movie {
	if !Absent(c.h.Initial) {
		for _, op := range c.creates {
			c.fail(op, "created a movie that existed")
		}
		return c.h.Initial
	}
	var row domain.Movie
	var by *Op
	for _, op := range c.creates {
		m := op.Call.Create.Movie()
		switch {
		case by == nil:
			row, by = m, op
		case !SameMovie(m, row) && !op.Call.Create.Replays(row):
			c.fail(op, "a second creation was accepted beside op %d's: two rows under one ID", by.ID)
		}
	}
	if by == nil && len(c.unknownCreates) > 0 && c.createdVersions() == 1 {
		row = c.unknownCreates[0].Call.Create.Movie()
	}
	if Absent(row) {
		if len(c.writes) > 0 {
			c.fail(c.writes[0], "landed on a movie that no creation created")
		}
		return row
	}
	c.states[row.Version] = row
	return row
}

// purged checks the purge of the last row: only a deleting row goes, the
// purge returns it as the last write left it, once, and nothing lands
// after it. It returns the state after it.
func (c *checker) purged(state domain.Movie) domain.Movie {
	if len(c.purges) == 0 {
		if c.unknownPurges > 0 && Absent(c.h.Final) && domain.Decide(domain.PurgeMovie{}, row(state)) == nil {
			return domain.Movie{}
		}
		return state
	}
	for _, p := range c.purges[1:] {
		c.fail(p, "a second purge removed a row (first: op %d)", c.purges[0].ID)
	}
	p := c.purges[0]
	if !SameMovie(*p.Out.Movie, state) {
		c.fail(p, "removed a row that is not the last write's:\n   got  %s\n   want %s", DescribeMovie(*p.Out.Movie, c.h.Base), DescribeMovie(state, c.h.Base))
	}
	if state.Status != domain.StatusDeleting {
		c.fail(p, "purged a movie that was not deleting (%s)", state.Status)
	}
	for _, w := range c.writes {
		if w.Start > p.End {
			c.fail(w, "landed after op %d had purged the row", p.ID)
		}
	}
	return domain.Movie{}
}

// stepLifecycle checks one committed write of the lifecycle against the
// row it was committed on, each rule stated from the design (domain's
// upload.go and deletion.go comments), not from the command's Decide.
func (c *checker) stepLifecycle(w *Op, prev, next domain.Movie) {
	now := commandNow(w.Call.Cmd)
	if prev.Status == domain.StatusDeleting {
		c.fail(w, "landed on a deleting movie: nothing can open, trace or ingest it")
	}
	awaiting := prev.Status == domain.StatusAwaitingUpload
	switch x := w.Call.Cmd.(type) {
	case domain.PrepareFrames:
		c.stats.Ranges++
		if !awaiting || prev.Progress.FramesWritten != x.From {
			c.fail(w, "recorded the ingest range [%d,%d) on a %s movie with %d frames prepared: ranges land once, in order",
				x.From, x.To, prev.Status, prev.Progress.FramesWritten)
		}
	case domain.CompleteIngest:
		c.stats.Ingests++
		if !awaiting {
			c.fail(w, "completed the ingest of a %s movie", prev.Status)
		}
	case domain.FailIngest:
		if !awaiting {
			c.fail(w, "failed the ingest of a %s movie", prev.Status)
		}
	case domain.ExpireUpload:
		c.stats.Expiries++
		switch {
		case !awaiting:
			c.fail(w, "expired the upload of a %s movie", prev.Status)
		case prev.Upload == nil || now.Before(prev.Upload.ExpiresAt):
			c.fail(w, "expired an upload before its expiry")
		case prev.Progress.TotalFrames > 0:
			c.fail(w, "expired an upload whose ingest had begun (%d of %d frames prepared): an ingest that began can no longer expire",
				prev.Progress.FramesWritten, prev.Progress.TotalFrames)
		}
	case domain.DeleteMovie:
		c.stats.Deletes++
		if next.Lease != nil || next.Status != domain.StatusDeleting {
			c.fail(w, "left the deleted movie %s with %s", next.Status, describeLease(next.Lease, now))
		}
	}
}

// lifecycleNow returns the Now a lifecycle command was decided with.
func lifecycleNow(cmd domain.Command) time.Time {
	switch x := cmd.(type) {
	case domain.PrepareFrames:
		return x.Now
	case domain.CompleteIngest:
		return x.Now
	case domain.FailIngest:
		return x.Now
	case domain.ExpireUpload:
		return x.Now
	case domain.DeleteMovie:
		return x.Now
	}
	return time.Time{}
}

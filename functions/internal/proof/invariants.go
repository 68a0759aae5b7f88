package proof

import (
	"fmt"
	"sort"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// Stats describe what a history exercised.
type Stats struct {
	Ops, Accepted, Refused, Unknown int
	Reads, FrameWrites              int
	// Takeovers counts accepted writes that replaced a lease that was stale
	// at the write's Now; EarlyTakeovers those of them that happened while the
	// lease's last renewer would, by its own (skewed) clock, still have
	// called it live. Those are where skew bites, and fencing must hold.
	Takeovers, EarlyTakeovers int
	// Fenced counts job writes and frame writes refused because the job no
	// longer held its lease.
	Fenced int
	// Replays counts accepted commands that wrote nothing because the row
	// already showed them done (domain.Replayed).
	Replays int
}

// Add accumulates s2 into s.
func (s *Stats) Add(s2 Stats) {
	s.Ops += s2.Ops
	s.Accepted += s2.Accepted
	s.Refused += s2.Refused
	s.Unknown += s2.Unknown
	s.Reads += s2.Reads
	s.FrameWrites += s2.FrameWrites
	s.Takeovers += s2.Takeovers
	s.EarlyTakeovers += s2.EarlyTakeovers
	s.Fenced += s2.Fenced
	s.Replays += s2.Replays
}

// Invariants checks a history against the protocol's invariants (see the
// package comment) without porcupine, and returns every violation found.
func Invariants(h *History) ([]string, Stats) {
	c := &checker{h: h,
		replaced: map[string]*Op{}, started: map[string]bool{}, claims: map[string]*Op{},
		renewer: map[string]int{}, states: map[int64]domain.Movie{h.Initial.Version: h.Initial},
	}
	c.run()
	return c.violations, c.stats
}

type checker struct {
	h          *History
	violations []string
	stats      Stats

	writes   []*Op                  // accepted commands, by version
	replaced map[string]*Op         // job ID -> the accepted write that replaced or removed its lease
	started  map[string]bool        // job IDs of accepted StartTrace writes
	claims   map[string]*Op         // job ID -> its accepted claim
	renewer  map[string]int         // lease ID -> client whose write last set its expiry
	states   map[int64]domain.Movie // every committed row, by version
	missing  map[int64]bool         // versions committed by writes whose outcome is unknown
}

func (c *checker) fail(op *Op, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if op != nil {
		msg = fmt.Sprintf("op %d (client %d, %s): %s", op.ID, op.Client, DescribeCall(op.Call, c.h.Base), msg)
	}
	c.violations = append(c.violations, msg)
}

func (c *checker) run() {
	unknownWrites := 0
	var reads, frames []*Op
	for i := range c.h.Ops {
		op := &c.h.Ops[i]
		c.stats.Ops++
		switch {
		case op.Out.Unknown:
			c.stats.Unknown++
			if op.Call.Kind == KindCommand {
				unknownWrites++
			}
		case op.Out.Err != "":
			c.fail(op, "store error that is neither a refusal nor a transport failure: %s", op.Out.Err)
		case op.Out.Refusal != nil:
			c.stats.Refused++
			if op.Out.Refusal.Code == domain.CodeLeaseLost && (op.Call.Kind == KindFrame || jobOf(op.Call.Cmd) != "") {
				c.stats.Fenced++
			}
		default:
			c.stats.Accepted++
			switch op.Call.Kind {
			case KindCommand:
				if op.Out.Movie == nil {
					c.fail(op, "accepted without the row as written")
					continue
				}
				c.writes = append(c.writes, op)
			case KindRead:
				reads = append(reads, op)
			case KindFrame:
				frames = append(frames, op)
			}
		}
		switch op.Call.Kind {
		case KindRead:
			c.stats.Reads++
		case KindFrame:
			c.stats.FrameWrites++
		}
	}
	c.separateReplays()
	c.versions(unknownWrites)
	c.replay()
	c.realTimeWrites()
	c.reads(reads)
	c.frames(frames)
}

// separateReplays takes out of the writes every accepted command that wrote
// nothing because the row already showed it done (domain.Replayed: a no-op
// edit, a retried request): it returns a row that another write (or the
// initial row) produced. Of the accepted commands that returned the same
// version, the writer is the one whose Now stamped the row (UpdatedAt); every
// other one must be a replay on that row, else versions reports the
// duplicate.
func (c *checker) separateReplays() {
	byVersion := map[int64][]*Op{}
	for _, w := range c.writes {
		byVersion[w.Out.Movie.Version] = append(byVersion[w.Out.Movie.Version], w)
	}
	isReplay := func(w *Op) bool {
		m := *w.Out.Movie
		return domain.Replayed(w.Call.Cmd, &m) && domain.Decide(w.Call.Cmd, &m) != nil
	}
	var writes []*Op
	for _, w := range c.writes {
		m := w.Out.Movie
		stampedBy := commandNow(w.Call.Cmd).UnixMilli() == m.UpdatedAt.UnixMilli()
		shared := len(byVersion[m.Version]) > 1 || m.Version <= c.h.Initial.Version
		if shared && !stampedBy && isReplay(w) {
			c.stats.Replays++
			continue
		}
		writes = append(writes, w)
	}
	c.writes = writes
}

// versions: the accepted writes' versions are initial+1 .. final, each
// once; a gap is allowed only for a write whose outcome is unknown.
func (c *checker) versions(unknownWrites int) {
	sort.SliceStable(c.writes, func(i, j int) bool { return c.writes[i].Out.Movie.Version < c.writes[j].Out.Movie.Version })
	first, last := c.h.Initial.Version, c.h.Final.Version
	seen := map[int64]*Op{}
	for _, w := range c.writes {
		v := w.Out.Movie.Version
		if prev, dup := seen[v]; dup {
			c.fail(w, "produced version %d, as did op %d: two writes committed on the same row version", v, prev.ID)
		}
		seen[v] = w
		if v <= first || v > last {
			c.fail(w, "produced version %d outside (%d, %d]", v, first, last)
		}
	}
	var missing []int64
	c.missing = map[int64]bool{}
	for v := first + 1; v <= last; v++ {
		if seen[v] == nil {
			missing = append(missing, v)
			c.missing[v] = true
		}
	}
	if len(missing) > unknownWrites {
		c.fail(nil, "row versions %v were committed by no accepted write (%d writes had unknown outcomes)", missing, unknownWrites)
	}
}

// replay re-executes the accepted writes in version order and checks each
// step's invariants.
func (c *checker) replay() {
	state := c.h.Initial
	for _, w := range c.writes {
		got := *w.Out.Movie
		if got.Version == state.Version+1 {
			next, err := domain.Execute(&state, w.Call.Cmd)
			switch {
			case err != nil:
				c.fail(w, "accepted at version %d, but replaying it on version %d refuses it: %v", got.Version, state.Version, err)
			case !SameMovie(next, got):
				c.fail(w, "returned a row that replaying it does not produce:\n   got  %s\n   want %s", DescribeMovie(got, c.h.Base), DescribeMovie(next, c.h.Base))
			}
			c.step(w, state, got)
		}
		// Otherwise an unknown write landed in between: the previous row is
		// not known, so only the bookkeeping below applies.
		c.track(w, state, got)
		state = got
		c.states[got.Version] = got
	}
	if !SameMovie(state, c.h.Final) {
		c.fail(nil, "the final row is not the last accepted write's row:\n   final %s\n   last  %s", DescribeMovie(c.h.Final, c.h.Base), DescribeMovie(state, c.h.Base))
	}
}

// commandNow returns the Now a command was decided with.
func commandNow(cmd domain.Command) time.Time {
	switch x := cmd.(type) {
	case domain.OpenAnalysis:
		return x.Now
	case domain.Heartbeat:
		return x.Now
	case domain.Release:
		return x.Now
	case domain.EditMarkers:
		return x.Now
	case domain.EditTrim:
		return x.Now
	case domain.EditCaptureInterval:
		return x.Now
	case domain.StartTrace:
		return x.Now
	case domain.ClaimJob:
		return x.Now
	case domain.BeginTrace:
		return x.Now
	case domain.RenewJob:
		return x.Now
	case domain.CompleteJob:
		return x.Now
	case domain.FailJob:
		return x.Now
	case domain.FinalizeStaleTrace:
		return x.Now
	}
	return time.Time{}
}

// jobOf returns the job ID a worker command acts for, or "".
func jobOf(cmd domain.Command) string {
	switch x := cmd.(type) {
	case domain.ClaimJob:
		return x.JobID
	case domain.BeginTrace:
		return x.JobID
	case domain.RenewJob:
		return x.JobID
	case domain.CompleteJob:
		return x.Job.ID
	case domain.FailJob:
		return x.Job.ID
	}
	return ""
}

// step checks one committed write against the row it was committed on.
// Each rule is stated from the seed, not from the command's Decide.
func (c *checker) step(w *Op, prev, next domain.Movie) {
	cmd := w.Call.Cmd
	now := commandNow(cmd)
	pl := prev.Lease
	live := pl.LiveAt(now)
	gone := pl != nil && (next.Lease == nil || next.Lease.ID != pl.ID || next.Lease.Kind != pl.Kind)

	// Never two live leases: a live lease leaves the row only by its
	// holder's own hand.
	if live && gone {
		own := false
		switch x := cmd.(type) {
		case domain.Release:
			own = pl.Kind == domain.LeaseAnalysis && x.LeaseID == pl.ID
		case domain.StartTrace:
			own = pl.Kind == domain.LeaseAnalysis && x.LeaseID == pl.ID
		case domain.CompleteJob:
			own = pl.Kind == domain.LeaseTracing && x.Job.ID == pl.ID
		case domain.FailJob:
			own = pl.Kind == domain.LeaseTracing && x.Job.ID == pl.ID
		}
		if !own {
			c.fail(w, "replaced the %s lease %s that was live at its Now (expires %s): two live leases",
				pl.Kind, short(pl.ID), rel(pl.ExpiresAt, c.h.Base))
		}
	}
	if pl != nil && !live && gone && next.Lease != nil {
		c.stats.Takeovers++
		if r, ok := c.renewer[pl.ID]; ok {
			taker := now.Add(-c.h.Config.Skews[w.Client])
			holderExpiry := pl.ExpiresAt.Add(-c.h.Config.Skews[r])
			if taker.Before(holderExpiry) {
				c.stats.EarlyTakeovers++
			}
		}
	}
	// A new lease comes only from the command that asks for it.
	if nl := next.Lease; nl != nil && (pl == nil || nl.ID != pl.ID) {
		ok := false
		switch x := cmd.(type) {
		case domain.OpenAnalysis:
			ok = nl.Kind == domain.LeaseAnalysis && nl.ID == x.LeaseID
		case domain.StartTrace:
			ok = nl.Kind == domain.LeaseTracing && nl.ID == x.JobID
		}
		if !ok {
			c.fail(w, "installed lease %s it did not ask for", short(nl.ID))
		}
	}

	holds := func(kind domain.LeaseKind, id string) bool {
		return pl != nil && live && pl.Kind == kind && pl.ID == id
	}
	switch x := cmd.(type) {
	case domain.EditMarkers:
		if !holds(domain.LeaseAnalysis, x.LeaseID) {
			c.fail(w, "an edit landed without the live analysis lease (row had %s)", describeLease(pl, now))
		}
	case domain.EditTrim:
		if !holds(domain.LeaseAnalysis, x.LeaseID) {
			c.fail(w, "an edit landed without the live analysis lease (row had %s)", describeLease(pl, now))
		}
	case domain.EditCaptureInterval:
		if !holds(domain.LeaseAnalysis, x.LeaseID) {
			c.fail(w, "an edit landed without the live analysis lease (row had %s)", describeLease(pl, now))
		}
	case domain.Heartbeat:
		if !holds(domain.LeaseAnalysis, x.LeaseID) {
			c.fail(w, "a heartbeat landed without the live analysis lease (row had %s)", describeLease(pl, now))
		}
	case domain.Release:
		if !holds(domain.LeaseAnalysis, x.LeaseID) {
			c.fail(w, "a release removed %s, not its own live analysis lease", describeLease(pl, now))
		}
	}
	if job := jobOf(cmd); job != "" {
		if r := c.replaced[job]; r != nil {
			c.fail(w, "landed for job %s after its lease was replaced by op %d", short(job), r.ID)
		}
		if !holds(domain.LeaseTracing, job) {
			c.fail(w, "landed without job %s's live tracing lease (row had %s)", short(job), describeLease(pl, now))
		}
		if _, claim := cmd.(domain.ClaimJob); claim {
			if first := c.claims[job]; first != nil {
				c.fail(w, "claimed job %s a second time (first claim: op %d)", short(job), first.ID)
			}
			if !c.started[job] {
				c.fail(w, "claimed job %s, which no accepted StartTrace created", short(job))
			}
		} else if pl != nil && !pl.Claimed {
			c.fail(w, "landed for job %s before any claim", short(job))
		}
	}
}

// track keeps the per-job and per-lease bookkeeping the checks use.
func (c *checker) track(w *Op, prev, next domain.Movie) {
	switch x := w.Call.Cmd.(type) {
	case domain.StartTrace:
		c.started[x.JobID] = true
	case domain.ClaimJob:
		if c.claims[x.JobID] == nil {
			c.claims[x.JobID] = w
		}
	}
	if pl := prev.Lease; pl != nil && pl.Kind == domain.LeaseTracing && (next.Lease == nil || next.Lease.ID != pl.ID) {
		if c.replaced[pl.ID] == nil {
			c.replaced[pl.ID] = w
		}
	}
	if nl := next.Lease; nl != nil && (prev.Lease == nil || prev.Lease.ID != nl.ID || !prev.Lease.ExpiresAt.Equal(nl.ExpiresAt)) {
		c.renewer[nl.ID] = w.Client
	}
}

func describeLease(l *domain.Lease, now time.Time) string {
	if l == nil {
		return "no lease"
	}
	state := "live"
	if !l.LiveAt(now) {
		state = "stale"
	}
	return fmt.Sprintf("the %s %s lease %s", state, l.Kind, short(l.ID))
}

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

package proof

import (
	"fmt"
	"sort"

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
	// HandOffs counts accepted HandOffJob writes, Continuations accepted
	// claims of a later segment (ClaimSegment with Segment > 0), Sweeps
	// accepted FinalizeStaleTrace writes (the sweeper's).
	HandOffs, Continuations, Sweeps int
	// The lifecycle (lifecycle.go): accepted creations (the first and its
	// replays), ingest ranges, completed ingests, expired uploads, deletes
	// and purges.
	Creates, Ranges, Ingests, Expiries, Deletes, Purges int
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
	s.HandOffs += s2.HandOffs
	s.Continuations += s2.Continuations
	s.Sweeps += s2.Sweeps
	s.Creates += s2.Creates
	s.Ranges += s2.Ranges
	s.Ingests += s2.Ingests
	s.Expiries += s2.Expiries
	s.Deletes += s2.Deletes
	s.Purges += s2.Purges
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

	writes    []*Op                  // accepted commands, by version
	replaced  map[string]*Op         // job ID -> the accepted write that replaced or removed its lease
	started   map[string]bool        // job IDs of accepted StartTrace writes
	claims    map[string]*Op         // job ID -> its first accepted claim; claimKey (job and segment) -> that segment's
	renewer   map[string]int         // lease ID -> client whose write last set its expiry
	states    map[int64]domain.Movie // every committed row, by version
	missing   map[int64]bool         // versions committed by writes whose outcome is unknown
	lifecycle                        // creations and purges (lifecycle_check.go)
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
			c.unknownLifecycle(op)
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
			case KindCreate, KindPurge:
				c.acceptedLifecycle(op)
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
	first, last := c.h.Initial.Version, c.lastVersion()
	seen := map[int64]*Op{}
	for _, w := range c.writes {
		v := w.Out.Movie.Version
		if prev, dup := seen[v]; dup {
			c.fail(w, "produced version %d, as did op %d: two writes committed on the same row version", v, prev.ID)
		}
		seen[v] = w
		if v <= first+c.createdVersions() || v > last {
			c.fail(w, "produced version %d outside (%d, %d]", v, first, last)
		}
	}
	var missing []int64
	c.missing = map[int64]bool{}
	for v := first + 1 + c.createdVersions(); v <= last; v++ {
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
	state := c.created()
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
			c.stepLifecycle(w, state, got)
		}
		// Otherwise an unknown write landed in between: the previous row is
		// not known, so only the bookkeeping below applies.
		c.track(w, state, got)
		state = got
		c.states[got.Version] = got
	}
	if state = c.purged(state); !SameMovie(state, c.h.Final) {
		c.fail(nil, "the final row is not the last accepted write's row:\n   final %s\n   last  %s", DescribeMovie(c.h.Final, c.h.Base), DescribeMovie(state, c.h.Base))
	}
}

package domain

import "time"

// Taking over a stale tracing lease. A command that acquires the movie
// (OpenAnalysis, StartTrace without a lease ID) replaces a stale lease. When
// that lease is a tracing lease, its job never reached a terminal write, so
// the row must itself record the job as failed, exactly as the sweeper's
// FinalizeStaleTrace would have: status, last job and its summary. A fixed
// update cannot do that (it would have to copy the stale lease into the job
// record only when there is one), so such a command refuses a stale tracing
// lease in its last clause, and its Successor on that row is a
// TakeOverStaleTrace: the sweeper's finalize and the command's own update
// in one conditional write, fenced on that very stale lease (TraceStale, the
// one statement of a stale tracing lease, found by StaleTraceAt). The stores
// commit the successor when the refusal's stored row (ALL_OLD) asks for it,
// so the rare takeover costs two requests and every other acquisition one;
// when the row changed again before the successor landed (the job's worker
// renewed or ended it), the store decides again on the newer row, a bounded
// number of rounds, then answers ErrConflict with nothing written.

// Successor is a command that, refused on a stored row, may name another
// command to commit instead: the same intent, restated for what the row
// turned out to hold.
type Successor interface {
	Successor(m Movie) (Command, bool)
}

// Next returns the command to commit instead of c, refused on m, if any: a
// successor whose precondition holds on m. Execute and every store follow
// it once per refusal.
func Next(c Command, m *Movie) (Command, bool) {
	s, ok := c.(Successor)
	if !ok || m == nil {
		return nil, false
	}
	next, ok := s.Successor(*m)
	if !ok || next.Validate() != nil || Decide(next, m) != nil {
		return nil, false
	}
	return next, true
}

// acquirer is a command that acquires the movie's lease over no live lease:
// base is its precondition without the stale-trace clause.
type acquirer interface {
	Command
	Replayable
	base() []Clause
}

// noStaleTrace is the last clause of every acquirer: the stored lease is not
// a stale tracing lease (TraceStale; the acquirer's earlier clauses refuse a
// live lease). Its refusal is only seen when the takeover kept losing races;
// the successor handles every other case.
func noStaleTrace(now time.Time) Clause {
	return Clause{If: Not{TraceStale(now)}, Else: func(m Movie) error {
		e := blockedBy(m.Lease)
		e.Message = "the previous trace is being ended; try again"
		return e
	}}
}

// staleTraceSuccessor is the Successor of an acquirer refused on m: the
// takeover of m's stale tracing lease.
func staleTraceSuccessor(c acquirer, now time.Time, m Movie) (Command, bool) {
	f, ok := StaleTraceAt(m, now)
	if !ok {
		return nil, false
	}
	return TakeOverStaleTrace{Abandoned: f, Then: c}, true
}

// StaleTraceAt returns the FinalizeStaleTrace of m's stale tracing lease at
// now (TraceStale), with the lease and progress as read, so that it commits
// only if neither changed; ok is false when m has no stale tracing lease.
func StaleTraceAt(m Movie, now time.Time) (f FinalizeStaleTrace, ok bool) {
	if !Holds(TraceStale(now), &m) {
		return FinalizeStaleTrace{}, false
	}
	return FinalizeStaleTrace{Job: *m.Lease, FramesWritten: m.Progress.FramesWritten, Now: now}, true
}

// TakeOverStaleTrace is Then (an acquirer) committed over the stale tracing
// lease of an abandoned job, which the same write records as failed.
//
// Precondition: Abandoned's (the stored lease is exactly that stale job's,
// with that progress) and Then's own. Update: Abandoned's terminal record
// (status tracing_failed, LastJob with the stalled or queued-too-long
// summary, its progress) with Then's update on top: Then's lease replaces
// the stale one, and a field both set (status for StartTrace) takes Then's
// value. AlreadyApplied is Then's, so a retried takeover whose answer was lost is
// recognised like a retried Then.
type TakeOverStaleTrace struct {
	Abandoned FinalizeStaleTrace
	Then      acquirer
}

func (c TakeOverStaleTrace) Validate() error {
	return firstError(c.Abandoned.Validate(), c.Then.Validate())
}

func (c TakeOverStaleTrace) Precondition() []Clause {
	return append(c.Abandoned.Precondition(), c.Then.base()...)
}

func (c TakeOverStaleTrace) AlreadyApplied() Cond { return c.Then.AlreadyApplied() }

func (c TakeOverStaleTrace) Update() []Assignment {
	then := c.Then.Update()
	named := make(map[Field]bool, len(then))
	for _, a := range then {
		named[a.Field] = true
	}
	out := append([]Assignment(nil), then...)
	for _, a := range c.Abandoned.Update() {
		if !named[a.Field] {
			out = append(out, a)
		}
	}
	return out
}

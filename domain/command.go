package domain

import "time"

// Guard is a precondition on a stored movie, stated as a value.
//
// Validate checks the input alone (no state). Precondition lists the clauses
// that must all hold on the stored movie, in the order their refusals take
// precedence. Every guard implicitly begins with Exists (see Condition).
type Guard interface {
	Validate() error
	Precondition() []Clause
}

// Command is one transition of a movie: a Guard plus the Update it makes,
// a list of field assignments. A storage adapter commits a command as one
// conditional write: the condition is Condition(cmd), the update is
// cmd.Update(), both translated, never restated.
type Command interface {
	Guard
	Update() []Assignment
}

// Replayable is a command that can recognise its own effect on a row.
//
// Invariant: AlreadyApplied holds on a stored row only if this very command (the same
// lease ID, job ID or claim token, or the same settings under the caller's
// lease) already took effect there, and it never holds where the
// precondition does. A command refused on a row where AlreadyApplied holds is
// therefore a success answered with that row: its first attempt committed
// and only the answer was lost (the SDK retried it), or it asked for what the
// row already is (a no-op edit). Either way nothing is written again.
type Replayable interface {
	AlreadyApplied() Cond
}

// Replayed reports whether the stored movie shows that c already took
// effect (see Replayable).
func Replayed(c Guard, m *Movie) bool {
	r, ok := c.(Replayable)
	return ok && m != nil && Holds(r.AlreadyApplied(), m)
}

var exists = Clause{If: Exists(), Else: func(Movie) error { return notFound() }}

// Condition is the whole precondition of g as one condition: Exists and
// every clause.
func Condition(g Guard) Cond {
	pre := g.Precondition()
	all := make(And, 0, len(pre)+1)
	all = append(all, exists.If)
	for _, c := range pre {
		all = append(all, c.If)
	}
	return all
}

// Decide evaluates g's precondition on a stored movie (nil: it does not
// exist) and returns nil when the write is legal, else the refusal of the
// first clause that does not hold. It does not call Validate.
func Decide(g Guard, m *Movie) error {
	if !Holds(exists.If, m) {
		return exists.Else(Movie{})
	}
	for _, c := range g.Precondition() {
		if !Holds(c.If, m) {
			return c.Else(*m)
		}
	}
	return nil
}

// Apply returns the movie after c's update. Call it only on a movie for
// which Decide returned nil. A copy reads its source on the row as it was
// before the update, as a storage engine's update does.
func Apply(c Command, m Movie) Movie {
	before := m
	for _, a := range c.Update() {
		if a.Op == AssignCopy {
			a = Set(a.Field, before.copied(a))
		}
		m.assign(a)
	}
	return m
}

// Execute runs a command against a movie (nil: the movie does not exist) and
// returns the next movie or the refusal; a refused or invalid command
// returns the movie unchanged (Movie{} if there is none), a replayed one
// (see Replayable) returns it unchanged with no error, and one refused where
// it has a successor (see Next) returns the successor's next movie. It is the reference
// semantics of every store: a store's conditional write must agree with it,
// and the differential test checks that it does.
func Execute(m *Movie, c Command) (Movie, error) {
	var unchanged Movie
	if m != nil {
		unchanged = *m
	}
	if err := c.Validate(); err != nil {
		return unchanged, err
	}
	if err := Decide(c, m); err != nil {
		if Replayed(c, m) {
			return unchanged, nil
		}
		if next, ok := Next(c, m); ok {
			return Apply(next, *m), nil
		}
		return unchanged, err
	}
	return Apply(c, *m), nil
}

// changed is the bookkeeping of every committed change: one more version and
// the time of the change.
func changed(now time.Time, update ...Assignment) []Assignment {
	return append(update, Add(FieldVersion, 1), Set(FieldUpdatedAt, now))
}

// sameRenewal holds when the stored lease was already renewed at now for d:
// the renewal a retried request would make again.
func sameRenewal(now time.Time, d time.Duration) Cond {
	return And{Cmp(FieldLeaseHeartbeatAt, OpEq, now), Cmp(FieldLeaseExpiresAt, OpEq, now.Add(d))}
}

// renewed extends the stored lease: heartbeat now, expiry one duration later.
func renewed(now time.Time, d time.Duration) []Assignment {
	return []Assignment{Set(FieldLeaseHeartbeatAt, now), Set(FieldLeaseExpiresAt, now.Add(d))}
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

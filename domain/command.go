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
// which Decide returned nil.
func Apply(c Command, m Movie) Movie {
	for _, a := range c.Update() {
		m.assign(a)
	}
	return m
}

// Execute runs a command against a movie (nil: the movie does not exist) and
// returns the next movie or the refusal; a refused or invalid command
// returns the movie unchanged (Movie{} if there is none). It is the
// reference semantics of every store: a store's conditional write must agree
// with it, and the differential test checks that it does.
func Execute(m *Movie, c Command) (Movie, error) {
	var unchanged Movie
	if m != nil {
		unchanged = *m
	}
	if err := c.Validate(); err != nil {
		return unchanged, err
	}
	if err := Decide(c, m); err != nil {
		return unchanged, err
	}
	return Apply(c, *m), nil
}

// changed is the bookkeeping of every committed change: one more version and
// the time of the change.
func changed(now time.Time, update ...Assignment) []Assignment {
	return append(update, Add(FieldVersion, 1), Set(FieldUpdatedAt, now))
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

package domain

import "time"

// Deleting a movie (issue 20 item 2). A request marks the movie deleting,
// one conditional write that answers at once; the clean-up (every object
// under the movie's prefixes in the bucket, its traced frames) is then
// finished by the sweeper, idempotently and as often as it takes, and the
// row goes last (PurgeMovie). No single request carries the clean-up, so a
// long movie's deletion never outlives the API's timeout, and a lost answer
// or a crash halfway leaves a deleting row that the next sweep finishes.
//
//	any status, no live lease -> DeleteMovie -> deleting -> (clean-up) -> PurgeMovie: no row

// StatusDeleting: the movie was deleted; its files and frames are being
// removed and then its row. Nothing can open, trace or ingest it.
const StatusDeleting Status = "deleting"

// DeleteMovie marks a movie deleting.
//
// Precondition: no live lease (a live analysis or tracing lease refuses
// with its holder), and the movie is not deleting already. A stale tracing
// lease is removed with it (the job shows as abandoned in the history, and
// no redelivered message can claim it any more).
//
// AlreadyApplied: the movie is deleting. Any second delete (a retry whose
// first answer was lost, or another user's) is the success it asked for.
type DeleteMovie struct{ Now time.Time }

func (c DeleteMovie) Validate() error { return nil }

func (c DeleteMovie) Precondition() []Clause {
	return []Clause{
		{If: Not{Cmp(FieldStatus, OpEq, StatusDeleting)}, Else: func(Movie) error { return deletingErr() }},
		{If: NoLiveLease(c.Now), Else: func(m Movie) error { return blockedBy(m.Lease) }},
	}
}

func (c DeleteMovie) AlreadyApplied() Cond { return Cmp(FieldStatus, OpEq, StatusDeleting) }

func (c DeleteMovie) Update() []Assignment {
	return changed(c.Now, Set(FieldStatus, StatusDeleting), Remove(FieldLease))
}

// PurgeMovie is the guard of removing a deleting movie's row, after its
// files and frames are gone (a store deletes the row under
// Condition(PurgeMovie)).
//
// Precondition: the movie is deleting.
type PurgeMovie struct{}

func (PurgeMovie) Validate() error { return nil }

func (PurgeMovie) Precondition() []Clause {
	return []Clause{{If: Cmp(FieldStatus, OpEq, StatusDeleting), Else: func(Movie) error {
		return Invalid("status", "the movie is not being deleted")
	}}}
}

func deletingErr() error {
	return &Error{Code: CodeNotFound, Message: "This movie is being deleted."}
}

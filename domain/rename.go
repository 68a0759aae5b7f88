package domain

import "time"

// RenameMovie gives a movie a new title.
//
// Precondition: nobody else is working on the movie: no live lease, or the
// caller's own analysis lease (a rename is then part of the caller's
// editing). A live lease of someone else, or any trace, refuses with its
// holder; a deleting movie is gone (not found). Setting a title is idempotent: a retried rename sets the same
// title again.
type RenameMovie struct {
	UserID string
	Title  string
	Now    time.Time
}

func (c RenameMovie) Validate() error {
	if c.UserID == "" {
		return Invalid("userId", "is required")
	}
	return validateText("title", c.Title, MaxTitle)
}

// ownEditing holds when the live lease is the caller's analysis lease.
func ownEditing(userID string, now time.Time) Cond {
	return And{Cmp(FieldLeaseKind, OpEq, LeaseAnalysis), Cmp(FieldLeaseUserID, OpEq, userID), LeaseLive(now)}
}

func (c RenameMovie) Precondition() []Clause {
	return []Clause{
		{If: Not{Cmp(FieldStatus, OpEq, StatusDeleting)}, Else: func(Movie) error { return deletingErr() }},
		{If: Or{NoLiveLease(c.Now), ownEditing(c.UserID, c.Now)}, Else: func(m Movie) error { return blockedBy(m.LiveLease(c.Now)) }},
	}
}

func (c RenameMovie) Update() []Assignment {
	return changed(c.Now, Set(FieldTitle, c.Title))
}

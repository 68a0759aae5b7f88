package domain

import (
	"errors"
	"fmt"
	"time"
)

// Code is the closed vocabulary of refusals. The HTTP edge maps each code to a
// status in one table; nothing else inspects error strings.
type Code string

const (
	// CodeInvalid: the input itself is malformed or out of range.
	CodeInvalid Code = "invalid_input"
	// CodeNotFound: no movie with that ID.
	CodeNotFound Code = "not_found"
	// CodeLeaseRequired: a write that needs a lease ID came without one.
	CodeLeaseRequired Code = "lease_required"
	// CodeLeaseHeld: another browser holds the live analysis lease.
	CodeLeaseHeld Code = "lease_held"
	// CodeTracingInProgress: a live tracing lease blocks the write.
	CodeTracingInProgress Code = "tracing_in_progress"
	// CodeLeaseLost: the caller's lease (or job) is no longer the live one.
	CodeLeaseLost Code = "lease_lost"
	// CodeAlreadyClaimed: the job's lease is live but a worker already claimed it.
	CodeAlreadyClaimed Code = "already_claimed"
	// CodeExists: a movie with that ID already exists (a duplicate create).
	CodeExists Code = "already_exists"
	// CodeNotHeld: a release whose lease is not the live analysis lease. Release
	// is idempotent, so callers treat this refusal as success.
	CodeNotHeld Code = "not_held"
)

// Holder is what a refused caller may learn about the live lease: enough to
// show "view only: <name> has been editing since <time>", never its ID.
type Holder struct {
	Kind      LeaseKind
	UserID    string
	UserName  string
	StartedAt time.Time
}

// Error is a refusal. Holder is set when a live lease caused it; Field names
// the offending input for CodeInvalid.
type Error struct {
	Code    Code
	Message string
	Field   string
	Holder  *Holder
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Field)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// ErrorCode returns the refusal code of err, or "" when err is not a refusal
// (an infrastructure failure, which the edge reports as a generic 500).
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// AsError returns the refusal inside err, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Invalid builds a CodeInvalid refusal naming the field.
func Invalid(field, format string, args ...any) *Error {
	return &Error{Code: CodeInvalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

func notFound() *Error {
	return &Error{Code: CodeNotFound, Message: "movie not found"}
}

func leaseLost(m Movie, now time.Time) *Error {
	return &Error{Code: CodeLeaseLost, Message: "the lease is no longer held", Holder: m.Holder(now)}
}

// blockedBy explains why a live lease that is not the caller's blocks a write.
func blockedBy(l *Lease) *Error {
	h := l.holder()
	if l.Kind == LeaseTracing {
		return &Error{Code: CodeTracingInProgress, Message: "a trace is in progress", Holder: &h}
	}
	return &Error{Code: CodeLeaseHeld, Message: "another browser is editing this movie", Holder: &h}
}

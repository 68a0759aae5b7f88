package domain

import "time"

// StatusCancelled: the user who started the trace cancelled it. The frames
// its job wrote before the cancel are kept; they lie at or after
// CleanBefore, so the next trace retraces them.
const StatusCancelled Status = "tracing_cancelled"

// Refusals of CancelTrace.
const (
	// CodeNotTracing: no trace is running (it may just have ended).
	CodeNotTracing Code = "not_tracing"
	// CodeNotYourTrace: a trace runs, started by someone else.
	CodeNotYourTrace Code = "not_your_trace"
)

// CancelTrace stops a running trace on behalf of the user who started it.
//
// Precondition: the live lease is the tracing lease Job (as read by the
// caller), and User started it. The update removes that lease, sets status
// tracing_cancelled and records the job's outcome with the frames written
// so far (FramesWritten, the progress as read). The job's worker can then
// make no further write: every write it makes is fenced on its live lease,
// so it stops at the next one.
type CancelTrace struct {
	Job           Lease
	User          User
	Now           time.Time
	FramesWritten int
}

func (c CancelTrace) Validate() error {
	var n error
	if c.FramesWritten < 0 {
		n = Invalid("framesWritten", "must not be negative")
	}
	return firstError(validateLeaseID("jobId", c.Job.ID), validateUser(c.User), n)
}

func (c CancelTrace) Precondition() []Clause {
	return []Clause{
		{If: LeaseIs(LeaseTracing, c.Job.ID, c.Now), Else: func(Movie) error {
			return &Error{Code: CodeNotTracing, Message: "no trace is running"}
		}},
		{If: Cmp(FieldLeaseUserID, OpEq, c.User.ID), Else: func(m Movie) error {
			h := m.Lease.holder()
			return &Error{Code: CodeNotYourTrace, Message: "only the user who started the trace can cancel it", Holder: &h}
		}},
	}
}

func (c CancelTrace) Update() []Assignment {
	return finish(c.Job, c.Now, c.FramesWritten, StatusCancelled, "")
}

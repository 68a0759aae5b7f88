// Package worker is the trace worker: it claims a queued trace job exactly
// once, clears the frames the job will retrace, runs the tracer, writes its
// frames fenced on the job's lease, renews the lease on a time cadence and
// publishes the terminal state. Handle is its SQS Lambda handler.
//
// Every write the worker makes after the claim is conditional on the movie
// row still carrying the job's claimed, live tracing lease (domain.JobFence).
// A worker that lost its lease therefore writes nothing more, and it
// publishes nothing: it stops at the first refusal. See docs/worker.md.
//
// The worker reaches storage and the queue only through its ports (ports.go)
// and time only through Options.Clock.
package worker

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/utils/clock"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/emf"
	"github.com/movietrace/tracinglocks/functions/internal/retry"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
)

// Defaults of the Options.
const (
	DefaultRenewEvery      = 30 * time.Second
	DefaultStopMargin      = 10 * time.Second
	DefaultStartReserve    = 30 * time.Second
	DefaultConflictRetries = 5
	// DefaultFrameBatch is the frames per fenced write: DynamoDB's 100
	// actions per transaction, less the fence.
	DefaultFrameBatch = 99
)

// Clock is the worker's only source of time: its lease times, deadlines,
// renewal cadence and pauses. clock.RealClock in production; tests pass
// k8s.io/utils/clock/testing's FakeClock.
type Clock = clock.WithTickerAndDelayedExecution

// Options configure a Worker. Movies, Frames and Tracer are required; a
// zero setting takes its default.
type Options struct {
	Movies Movies
	Frames Frames
	Tracer tracer.Tracer
	// Queue, when set, lets Handle make a message it leaves for redelivery
	// visible again after RequeueDelay instead of after the queue's whole
	// visibility timeout.
	Queue Queue
	// Log receives the worker's structured logs (default: discard).
	Log *slog.Logger
	// Clock (default clock.RealClock{}).
	Clock Clock
	// Metrics, when set, receives the worker's business metrics (metrics.go).
	Metrics *emf.Writer

	// LeaseDuration is how far the claim and every renewal extend the lease
	// (default domain.DefaultLeaseDuration).
	LeaseDuration time.Duration
	// RenewEvery caps the renewal cadence. The lease is renewed, with the
	// progress so far, every min(RenewEvery, LeaseDuration/3), never per frame.
	RenewEvery time.Duration
	// StopMargin is how long before the invocation's deadline a running job
	// stops tracing, to publish its end while it still can.
	StopMargin time.Duration
	// StartReserve is the least time before the deadline in which a job is
	// claimed at all; with less, the message is left for redelivery unclaimed.
	// It must be at least StopMargin.
	StartReserve time.Duration
	// ConflictRetries bounds the retries of one write refused for a
	// conflict (domain.ErrConflict); negative means none.
	ConflictRetries int
	// Backoff is the pause before retry n (n >= 1) of a write (default
	// retry.Jittered).
	Backoff func(n int) time.Duration
	// RequeueDelay is the visibility left to a message of the n-th receive
	// (n >= 1) that Handle leaves for redelivery (default 2 s per receive,
	// at most 30 s).
	RequeueDelay func(receiveCount int) time.Duration
	// FrameBatch is the most frames per fenced write (default
	// DefaultFrameBatch); the Frames adapter must accept that many.
	FrameBatch int
}

// Worker runs trace jobs. It holds no mutable state of its own: jobs may
// run concurrently.
type Worker struct {
	o Options
}

// New returns a worker with the options' settings, or an error naming the
// first missing or inconsistent one.
func New(o Options) (*Worker, error) {
	if o.Movies == nil || o.Frames == nil || o.Tracer == nil {
		return nil, errors.New("worker: Movies, Frames and Tracer are required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.LeaseDuration, domain.DefaultLeaseDuration)
	def(&o.RenewEvery, DefaultRenewEvery)
	def(&o.StopMargin, DefaultStopMargin)
	def(&o.StartReserve, DefaultStartReserve)
	switch {
	case o.ConflictRetries == 0:
		o.ConflictRetries = DefaultConflictRetries
	case o.ConflictRetries < 0:
		o.ConflictRetries = 0
	}
	if o.Backoff == nil {
		o.Backoff = retry.Jittered
	}
	if o.RequeueDelay == nil {
		o.RequeueDelay = defaultRequeueDelay
	}
	if o.FrameBatch == 0 {
		o.FrameBatch = DefaultFrameBatch
	}
	switch {
	case o.LeaseDuration < 0 || o.RenewEvery < 0 || o.StopMargin < 0 || o.StartReserve < 0:
		return nil, errors.New("worker: durations must not be negative")
	case o.StartReserve < o.StopMargin:
		return nil, fmt.Errorf("worker: the start reserve (%v) must be at least the stop margin (%v)", o.StartReserve, o.StopMargin)
	case o.FrameBatch < 1:
		return nil, fmt.Errorf("worker: frame batch %d must be positive", o.FrameBatch)
	}
	return &Worker{o: o}, nil
}

// cadence is the renewal period: RenewEvery, and at least three renewals
// per lease duration.
func (w *Worker) cadence() time.Duration {
	return max(min(w.o.RenewEvery, w.o.LeaseDuration/3), time.Millisecond)
}

func defaultRequeueDelay(n int) time.Duration {
	return min(time.Duration(n)*2*time.Second, 30*time.Second)
}

// Result is what became of one job message.
type Result string

const (
	// ResultTraced: this worker published status traced (its value is the
	// status's own).
	ResultTraced = Result(domain.StatusTraced)
	// ResultFailed: this worker published status tracing_failed (its value
	// is the status's own).
	ResultFailed = Result(domain.StatusFailed)
	// ResultNotClaimed: the claim was refused (already claimed, the lease was
	// replaced or is stale, the movie is gone): a no-op.
	ResultNotClaimed Result = "not_claimed"
	// ResultLeaseLost: the job was claimed and then lost its lease; the
	// worker stopped and published nothing.
	ResultLeaseLost Result = "lease_lost"
	// ResultStranded: the job was claimed but this worker could make no
	// terminal write (the invocation ended, or DynamoDB failed); its lease
	// goes stale, readers see the trace as stalled, and whoever ends it
	// (the sweeper, or a takeover) records it abandoned
	// (events.TracingAbandoned). Its metric value stays "abandoned": the
	// deployed alarm on abandoned segments names it.
	ResultStranded Result = "abandoned"
	// ResultDeferred: the job was not claimed (too close to the deadline, or
	// the claim failed in transport) and the message must be redelivered.
	ResultDeferred Result = "deferred"
	// ResultHandedOff: the invocation's deadline came first; this segment
	// checkpointed and enqueued the job's next segment.
	ResultHandedOff Result = "handed_off"
	// ResultUndecodable: the message body is not a trace job; it can never
	// succeed, so it is logged and dropped.
	ResultUndecodable Result = "undecodable"
)

// Outcome is the result of one job message.
type Outcome struct {
	Result        Result
	FramesWritten int
	// Summary is the failure summary published with ResultFailed.
	Summary string
	// Err is the cause, for logs and tests; never shown to users.
	Err error
}

// Redeliver reports whether the message must stay on the queue. Only an
// unclaimed job is redelivered: a claimed job's redelivery would be refused
// by its own claim, so it could never help.
func (o Outcome) Redeliver() bool { return o.Result == ResultDeferred }

// errLeaseLost marks a refusal of one of the job's fenced writes: the lease
// is no longer the job's claimed live lease.
type errLeaseLost struct{ refusal error }

func (e *errLeaseLost) Error() string { return "lease lost: " + e.refusal.Error() }
func (e *errLeaseLost) Unwrap() error { return e.refusal }

// errExpired: the worker's own clock says its lease has expired (its
// renewals failed); every fenced write would now be refused.
var errExpired = errors.New("the lease expired: renewals did not get through")

// panicError is a recovered panic with the stack where it happened.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.value) }

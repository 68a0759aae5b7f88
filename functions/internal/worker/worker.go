// Package worker is the trace worker: it claims a queued trace job exactly
// once, clears the frames the job will retrace, runs the tracer, writes its
// frames fenced on the job's lease, renews the lease on a time cadence and
// publishes the terminal state. Handle is its SQS Lambda handler.
//
// Every write the worker makes after the claim is conditional on the movie
// row still carrying the job's claimed, live tracing lease (domain.JobFence):
// the movie-row updates directly, the frame writes through a ConditionCheck
// in the same TransactWriteItems. A worker that lost its lease therefore
// writes nothing more, and it publishes nothing: it stops at the first
// refusal. See docs/worker.md.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
)

// Movies is the part of dynamo.MovieStore the worker uses.
type Movies interface {
	Commit(ctx context.Context, movieID string, cmd domain.Command) (domain.Movie, error)
	FenceCheck(movieID string, f domain.JobFence) (types.TransactWriteItem, error)
}

// Frames is the part of dynamo.FrameStore the worker uses.
type Frames interface {
	Keys(ctx context.Context, movieID string, from int) ([]int, error)
	WriteFenced(ctx context.Context, movieID string, fence types.TransactWriteItem, puts []domain.Frame, deletes []int) error
}

var (
	_ Movies = (*dynamo.MovieStore)(nil)
	_ Frames = (*dynamo.FrameStore)(nil)
)

// Defaults of a Worker's settings.
const (
	DefaultRenewEvery      = 30 * time.Second
	DefaultStopMargin      = 10 * time.Second
	DefaultStartReserve    = 30 * time.Second
	DefaultConflictRetries = 5
)

// Worker runs trace jobs. Its exported fields are settings; set them before
// the first job and do not change them while jobs run.
type Worker struct {
	movies Movies
	frames Frames
	tracer tracer.Tracer
	log    *slog.Logger

	// LeaseDuration is how far the claim and every renewal extend the lease
	// (domain.DefaultLeaseDuration unless configured).
	LeaseDuration time.Duration
	// RenewEvery caps the renewal cadence. The lease is renewed, with the
	// progress so far, every min(RenewEvery, LeaseDuration/3), never per frame.
	RenewEvery time.Duration
	// StopMargin is how long before the invocation's deadline a running job
	// stops tracing, to publish tracing_failed ("ran out of time") while it
	// still can.
	StopMargin time.Duration
	// StartReserve is the least time before the deadline in which a job is
	// claimed at all; with less, the message is left for redelivery unclaimed.
	StartReserve time.Duration
	// ConflictRetries bounds the retries of one write that DynamoDB refused
	// for a transaction conflict (nothing was written; the lease is not lost).
	ConflictRetries int
	// Backoff is the pause before conflict retry n (n >= 1).
	Backoff func(n int) time.Duration
	// Now is the clock used for lease times (the commands' Now). Deadlines
	// use the real clock.
	Now func() time.Time

	// Queue and QueueURL, when both are set, let Handle make a message it
	// leaves for redelivery visible again after RequeueDelay instead of after
	// the queue's whole visibility timeout (see Handle).
	Queue    VisibilityAPI
	QueueURL string
	// RequeueDelay is the visibility left to a message of the n-th receive
	// (n >= 1) that Handle leaves for redelivery.
	RequeueDelay func(receiveCount int) time.Duration
}

// New returns a worker with the default settings.
func New(movies Movies, frames Frames, tr tracer.Tracer, log *slog.Logger) *Worker {
	return &Worker{
		movies: movies, frames: frames, tracer: tr, log: log,
		LeaseDuration: domain.DefaultLeaseDuration, RenewEvery: DefaultRenewEvery,
		StopMargin: DefaultStopMargin, StartReserve: DefaultStartReserve,
		ConflictRetries: DefaultConflictRetries, Backoff: jittered, Now: time.Now,
		RequeueDelay: defaultRequeueDelay,
	}
}

// cadence is the renewal period: RenewEvery, and at least three renewals
// per lease duration.
func (w *Worker) cadence() time.Duration {
	return max(min(w.RenewEvery, w.LeaseDuration/3), time.Millisecond)
}

// jittered is capped exponential backoff with full jitter.
func jittered(n int) time.Duration {
	ceiling := min(50*time.Millisecond<<min(n-1, 10), time.Second)
	return rand.N(ceiling) + time.Millisecond
}

func defaultRequeueDelay(n int) time.Duration {
	return min(time.Duration(n)*2*time.Second, 30*time.Second)
}

// Result is what became of one job message.
type Result string

const (
	// ResultTraced: this worker published status traced.
	ResultTraced Result = "traced"
	// ResultFailed: this worker published status tracing_failed.
	ResultFailed Result = "tracing_failed"
	// ResultNotClaimed: the claim was refused (already claimed, the lease was
	// replaced or is stale, the movie is gone): a no-op.
	ResultNotClaimed Result = "not_claimed"
	// ResultLeaseLost: the job was claimed and then lost its lease; the
	// worker stopped and published nothing.
	ResultLeaseLost Result = "lease_lost"
	// ResultAbandoned: the job was claimed but no terminal write could be
	// made (the invocation ended, or DynamoDB failed); its lease goes stale
	// and readers see the trace as stalled.
	ResultAbandoned Result = "abandoned"
	// ResultDeferred: the job was not claimed (too close to the deadline, or
	// the claim failed in transport) and the message must be redelivered.
	ResultDeferred Result = "deferred"
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

// Run runs one job: claim, plan, clear, trace, terminal write. ctx is the
// invocation's context; its deadline bounds the job (see StopMargin).
func (w *Worker) Run(ctx context.Context, job events.TraceJob) Outcome {
	log := w.log.With(slog.String("movieId", job.MovieID), slog.String("jobId", job.JobID))
	if err := ctx.Err(); err != nil {
		log.WarnContext(ctx, "job not started: the invocation is ending; left for redelivery")
		return Outcome{Result: ResultDeferred, Err: err}
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < w.StartReserve {
		log.WarnContext(ctx, "job not started: too close to the invocation deadline; left for redelivery",
			slog.Duration("remaining", time.Until(d)), slog.Duration("startReserve", w.StartReserve))
		return Outcome{Result: ResultDeferred, Err: context.DeadlineExceeded}
	}
	r := &run{w: w, log: log, movieID: job.MovieID, jobID: job.JobID}
	movie, err := r.apply(ctx, func(now time.Time) domain.Command {
		return domain.ClaimJob{JobID: job.JobID, Now: now, Duration: w.LeaseDuration}
	})
	if code := domain.ErrorCode(err); code != "" {
		log.InfoContext(ctx, "job not claimed: a redelivered, replaced or stale job is a no-op", slog.String("code", string(code)))
		return Outcome{Result: ResultNotClaimed, Err: err}
	}
	if err != nil {
		// The claim may or may not have landed. Redelivery claims it if it
		// did not; if it did, the redelivery is refused and the job's lease
		// goes stale (shown as stalled), which is the price of claiming
		// exactly once.
		log.WarnContext(ctx, "claim failed; left for redelivery", slog.String("error", err.Error()))
		return Outcome{Result: ResultDeferred, Err: err}
	}
	if movie.Lease == nil || movie.Lease.ID != job.JobID || !movie.Lease.Claimed {
		// Cannot happen: the claim's condition and ALL_NEW say otherwise.
		log.ErrorContext(ctx, "claimed row does not carry the job's claimed lease")
		return Outcome{Result: ResultAbandoned, Err: errors.New("claimed row without the claimed lease")}
	}
	r.movie, r.lease, r.expires = movie, *movie.Lease, movie.Lease.ExpiresAt
	if job.FromFrame != r.lease.FromFrame {
		log.WarnContext(ctx, "message fromFrame differs from the lease's; the lease is authoritative",
			slog.Int("messageFromFrame", job.FromFrame), slog.Int("leaseFromFrame", r.lease.FromFrame))
	}
	log.InfoContext(ctx, "job claimed", slog.Int("fromFrame", r.lease.FromFrame), slog.Int64("version", movie.Version))
	return r.execute(ctx)
}

// run is the state of one claimed job.
type run struct {
	w       *Worker
	log     *slog.Logger
	movieID string
	jobID   string
	movie   domain.Movie // as claimed
	lease   domain.Lease // as claimed
	plan    domain.TracePlan
	expires time.Time // the lease's expiry as last written by this worker
	written int       // frames durably written
	renews  int
}

func (r *run) execute(ctx context.Context) (out Outcome) {
	jobCtx, cancel := ctx, context.CancelFunc(func() {})
	if d, ok := ctx.Deadline(); ok {
		jobCtx, cancel = context.WithDeadline(ctx, d.Add(-r.w.StopMargin))
	}
	defer cancel()
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = &panicError{value: p, stack: debug.Stack()}
			}
		}()
		return r.work(jobCtx)
	}()
	return r.finish(ctx, jobCtx, err)
}

// work is everything between the claim and the terminal write.
func (r *run) work(ctx context.Context) error {
	r.plan = domain.PlanTrace(r.movie, r.lease)
	// The plan goes on the row before any frame is touched: CleanBefore drops
	// to ClearFrom, so if this job dies, the next trace retraces its frames.
	if _, err := r.fenced(ctx, func(f domain.JobFence) domain.Command {
		return domain.BeginTrace{JobFence: f, Duration: r.w.LeaseDuration, CleanBefore: r.plan.ClearFrom, TotalFrames: r.plan.Frames}
	}); err != nil {
		return err
	}
	lastRenew := time.Now()
	keys, err := r.w.frames.Keys(ctx, r.movieID, r.plan.ClearFrom)
	if err != nil {
		return err
	}
	for len(keys) > 0 {
		n := min(len(keys), dynamo.MaxFencedWrites)
		if err := r.write(ctx, nil, keys[:n]); err != nil {
			return err
		}
		keys = keys[n:]
		if time.Since(lastRenew) >= r.w.cadence() {
			if err := r.renew(ctx); err != nil {
				return err
			}
			lastRenew = time.Now()
		}
	}
	r.log.DebugContext(ctx, "frames cleared", slog.Int("clearFrom", r.plan.ClearFrom))
	return r.trace(ctx, lastRenew)
}

// trace runs the tracer in its own goroutine and writes what it emits from
// this one, so that at most one fenced write of the job is in flight and
// renewals happen on time even while the tracer is busy with one frame.
func (r *run) trace(ctx context.Context, lastRenew time.Time) error {
	tctx, stop := context.WithCancel(ctx)
	defer stop()
	frames := make(chan domain.Frame, dynamo.MaxFencedWrites)
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- &panicError{value: p, stack: debug.Stack()}
			}
		}()
		done <- r.w.tracer.Trace(tctx, r.movie, r.plan, func(f domain.Frame) error {
			select {
			case frames <- f:
				return nil
			case <-tctx.Done():
				return tctx.Err()
			}
		})
	}()
	// abort stops the tracer and waits a little for it: it must not emit
	// into a job that is over (emit fails from now on anyway).
	abort := func(err error) error {
		stop()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			r.log.WarnContext(ctx, "tracer did not return within 2 s of being stopped")
		}
		return err
	}

	buf := make([]domain.Frame, 0, dynamo.MaxFencedWrites)
	accept := func(f domain.Frame) error {
		if err := r.accept(&buf, f); err != nil {
			return err
		}
		if len(buf) == dynamo.MaxFencedWrites {
			return r.flush(ctx, &buf)
		}
		return nil
	}
	tick := time.NewTicker(max(r.w.cadence()-time.Since(lastRenew), time.Millisecond))
	defer tick.Stop()
	reset := false
	for {
		select {
		case f := <-frames:
			if err := accept(f); err != nil {
				return abort(err)
			}
		case err := <-done:
			// Everything Trace emitted is in the channel: emit returned.
			for drained := false; !drained; {
				select {
				case f := <-frames:
					if err := accept(f); err != nil {
						return err
					}
				default:
					drained = true
				}
			}
			if err != nil {
				return fmt.Errorf("tracer: %w", err)
			}
			if err := r.flush(ctx, &buf); err != nil {
				return err
			}
			if r.written != r.plan.Frames {
				return fmt.Errorf("tracer returned after %d of %d planned frames", r.written, r.plan.Frames)
			}
			return nil
		case <-tick.C:
			if !reset {
				tick.Reset(r.w.cadence())
				reset = true
			}
			// Progress counts durable frames: flush what is buffered first.
			if err := r.flush(ctx, &buf); err != nil {
				return abort(err)
			}
			if err := r.renew(ctx); err != nil {
				return abort(err)
			}
		case <-ctx.Done():
			return abort(ctx.Err())
		}
	}
}

// accept checks one emitted frame and buffers it: it must be the plan's next
// frame, and valid. It gets the job's ID.
func (r *run) accept(buf *[]domain.Frame, f domain.Frame) error {
	i := r.written + len(*buf)
	if i >= r.plan.Frames {
		return fmt.Errorf("tracer emitted frame %d beyond the plan's %d frames", f.Index, r.plan.Frames)
	}
	if want := r.plan.FrameAt(i); f.Index != want {
		return fmt.Errorf("tracer emitted frame %d where the plan has frame %d", f.Index, want)
	}
	f.JobID = r.jobID
	if err := f.Validate(); err != nil {
		return fmt.Errorf("tracer emitted an invalid frame %d: %w", f.Index, err)
	}
	*buf = append(*buf, f)
	return nil
}

// flush writes the buffered frames in one fenced transaction.
func (r *run) flush(ctx context.Context, buf *[]domain.Frame) error {
	if len(*buf) == 0 {
		return nil
	}
	if err := r.write(ctx, *buf, nil); err != nil {
		return err
	}
	r.written += len(*buf)
	*buf = (*buf)[:0]
	return nil
}

// write is one fenced TransactWriteItems of frame puts or deletes, retried
// on transaction conflicts.
func (r *run) write(ctx context.Context, puts []domain.Frame, deletes []int) error {
	for attempt := 0; ; attempt++ {
		f, err := r.fence()
		if err != nil {
			return err
		}
		check, err := r.w.movies.FenceCheck(r.movieID, f)
		if err != nil {
			return err
		}
		err = r.w.frames.WriteFenced(ctx, r.movieID, check, puts, deletes)
		if err == nil {
			return nil
		}
		if refusal := dynamo.FenceRefusal(err, f); domain.ErrorCode(refusal) != "" {
			return &errLeaseLost{refusal: refusal}
		}
		if !dynamo.IsTransactionConflict(err) || attempt >= r.w.ConflictRetries || !r.pause(ctx, attempt+1) {
			return err
		}
	}
}

// fence is the job's fence at the worker's now; it fails once the worker
// itself knows its lease has expired.
func (r *run) fence() (domain.JobFence, error) {
	now := r.w.Now()
	if !now.Before(r.expires) {
		return domain.JobFence{}, errExpired
	}
	return domain.JobFence{JobID: r.jobID, Now: now}, nil
}

// fenced applies a movie-row command guarded by the job fence; a refusal is
// errLeaseLost.
func (r *run) fenced(ctx context.Context, build func(domain.JobFence) domain.Command) (domain.Movie, error) {
	if _, err := r.fence(); err != nil {
		return domain.Movie{}, err
	}
	m, err := r.apply(ctx, func(now time.Time) domain.Command { return build(domain.JobFence{JobID: r.jobID, Now: now}) })
	if domain.ErrorCode(err) != "" {
		return m, &errLeaseLost{refusal: err}
	}
	if err == nil && m.Lease != nil {
		r.expires = m.Lease.ExpiresAt
	}
	return m, err
}

// renew heartbeats the lease and publishes the frames written so far. A
// refusal stops the job; a transport failure does not (the lease may still
// be live, and the next fenced write will tell).
func (r *run) renew(ctx context.Context) error {
	_, err := r.fenced(ctx, func(f domain.JobFence) domain.Command {
		return domain.RenewJob{JobFence: f, Duration: r.w.LeaseDuration, FramesWritten: r.written}
	})
	var lost *errLeaseLost
	if err == nil {
		r.renews++
	} else if errors.As(err, &lost) || errors.Is(err, errExpired) || ctx.Err() != nil {
		return err
	} else {
		r.log.WarnContext(ctx, "lease renewal failed; continuing while the lease lasts",
			slog.String("error", err.Error()), slog.Time("leaseExpiresAt", r.expires))
	}
	return nil
}

// apply commits a command on the movie row, retrying transaction conflicts
// (the command is rebuilt with a fresh now on every attempt).
func (r *run) apply(ctx context.Context, build func(now time.Time) domain.Command) (domain.Movie, error) {
	for attempt := 0; ; attempt++ {
		m, err := r.w.movies.Commit(ctx, r.movieID, build(r.w.Now()))
		if err == nil || !dynamo.IsTransactionConflict(err) || attempt >= r.w.ConflictRetries || !r.pause(ctx, attempt+1) {
			return m, err
		}
	}
}

// pause waits before retry n; false if ctx ended first.
func (r *run) pause(ctx context.Context, n int) bool {
	d := time.Duration(0)
	if r.w.Backoff != nil {
		d = r.w.Backoff(n)
	}
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// finish publishes the terminal state for the job's result, if it still can.
func (r *run) finish(ctx, jobCtx context.Context, err error) Outcome {
	var lost *errLeaseLost
	switch {
	case err == nil:
		_, cerr := r.fenced(ctx, func(f domain.JobFence) domain.Command {
			return domain.CompleteJob{Job: r.lease, Now: f.Now, FramesWritten: r.written, CleanBefore: r.plan.End}
		})
		if cerr != nil {
			return r.unpublished(ctx, cerr)
		}
		r.log.InfoContext(ctx, "job traced", slog.Int("frames", r.written), slog.Int("renewals", r.renews))
		return Outcome{Result: ResultTraced, FramesWritten: r.written}
	case errors.As(err, &lost) || errors.Is(err, errExpired):
		return r.unpublished(ctx, err)
	case ctx.Err() != nil:
		// The invocation itself ended: nothing can be written any more.
		r.log.ErrorContext(ctx, "invocation ended during the job; its lease will go stale",
			slog.Int("framesWritten", r.written), slog.String("error", err.Error()))
		return Outcome{Result: ResultAbandoned, FramesWritten: r.written, Err: err}
	}

	summary, safe := tracer.SummaryOf(err)
	var pe *panicError
	switch {
	case safe:
	case errors.As(err, &pe):
	case jobCtx.Err() != nil:
		summary = fmt.Sprintf("The trace ran out of time after %d of %d frames. Start it again, or trace fewer frames.", r.written, r.plan.Frames)
	}
	if summary == "" {
		summary = fmt.Sprintf("Tracing failed because of an internal error (reference %s).", r.jobID[:8])
	}
	attrs := []any{slog.String("error", err.Error()), slog.Int("framesWritten", r.written), slog.Int("totalFrames", r.plan.Frames)}
	if errors.As(err, &pe) {
		attrs = append(attrs, slog.String("stack", string(pe.stack)))
	}
	r.log.ErrorContext(ctx, "job failed", attrs...)
	_, ferr := r.fenced(ctx, func(f domain.JobFence) domain.Command {
		return domain.FailJob{Job: r.lease, Now: f.Now, FramesWritten: r.written, Summary: summary}
	})
	if ferr != nil {
		return r.unpublished(ctx, ferr)
	}
	return Outcome{Result: ResultFailed, FramesWritten: r.written, Summary: domain.SanitizeSummary(summary), Err: err}
}

// unpublished reports a job whose terminal state could not be published.
func (r *run) unpublished(ctx context.Context, err error) Outcome {
	var lost *errLeaseLost
	if errors.As(err, &lost) || errors.Is(err, errExpired) {
		code := "expired"
		if lost != nil {
			code = string(domain.ErrorCode(lost.refusal))
		}
		r.log.WarnContext(ctx, "lease lost: the job stopped and published nothing",
			slog.String("code", code), slog.Int("framesWritten", r.written))
		return Outcome{Result: ResultLeaseLost, FramesWritten: r.written, Err: err}
	}
	r.log.ErrorContext(ctx, "terminal write failed; the job's lease will go stale",
		slog.String("error", err.Error()), slog.Int("framesWritten", r.written))
	return Outcome{Result: ResultAbandoned, FramesWritten: r.written, Err: err}
}

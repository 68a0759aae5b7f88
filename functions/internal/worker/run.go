package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"k8s.io/utils/clock"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/token"
)

// Run runs one job: claim, plan, clear, trace, terminal write. ctx is the
// invocation's context; its deadline bounds the job (see StopMargin).
func (w *Worker) Run(ctx context.Context, job events.TraceJob) Outcome {
	log := w.o.Log.With(slog.String("movieId", job.MovieID), slog.String("jobId", job.JobID))
	if err := ctx.Err(); err != nil {
		log.WarnContext(ctx, "job not started: the invocation is ending; left for redelivery")
		return Outcome{Result: ResultDeferred, Err: err}
	}
	if d, ok := ctx.Deadline(); ok {
		if left := d.Sub(w.o.Clock.Now()); left < w.o.StartReserve {
			log.WarnContext(ctx, "job not started: too close to the invocation deadline; left for redelivery",
				slog.Duration("remaining", left), slog.Duration("startReserve", w.o.StartReserve))
			return Outcome{Result: ResultDeferred, Err: context.DeadlineExceeded}
		}
	}
	r := &run{w: w, log: log, movieID: job.MovieID, jobID: job.JobID, segment: job.Segment}
	// One claim token per delivery: a retry of this attempt's claim (the
	// SDK's, after a lost answer) is recognised as done, while a redelivered
	// message, a new attempt with a new token, stays a no-op.
	claimToken := token.New()
	movie, err := r.commit(ctx, func(now time.Time) domain.Command {
		return domain.ClaimSegment{JobID: job.JobID, Segment: job.Segment, Token: claimToken, Now: now, Duration: w.o.LeaseDuration}
	})
	if code := domain.ErrorCode(err); code != "" {
		log.InfoContext(ctx, "job not claimed: a redelivered, replaced or stale job is a no-op", slog.String("code", string(code)))
		w.claimRefused(ctx, code)
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
		return Outcome{Result: ResultStranded, Err: errors.New("claimed row without the claimed lease")}
	}
	r.movie, r.lease, r.expires = movie, *movie.Lease, movie.Lease.ExpiresAt
	if job.FromFrame != r.lease.FromFrame {
		log.WarnContext(ctx, "message fromFrame differs from the lease's; the lease is authoritative",
			slog.Int("messageFromFrame", job.FromFrame), slog.Int("leaseFromFrame", r.lease.FromFrame))
	}
	log.InfoContext(ctx, "job claimed", slog.Int("segment", job.Segment), slog.Int("fromFrame", r.lease.FromFrame),
		slog.Int64("version", movie.Version))
	started := w.o.Clock.Now()
	out := r.execute(ctx)
	r.segmentEnded(ctx, out, w.o.Clock.Now().Sub(started))
	return out
}

// run is the state of one claimed job.
type run struct {
	w       *Worker
	log     *slog.Logger
	movieID string
	jobID   string
	segment int
	// deadline is the invocation's, kept when finish detaches its writes
	// from the invocation's context (zero: none or not detached).
	deadline time.Time
	movie    domain.Movie // as claimed
	lease    domain.Lease // as claimed
	plan     domain.TracePlan
	expires  time.Time // the lease's expiry as last written by this worker
	resumed  int       // frames the earlier segments wrote (the checkpoint)
	// cleared: this (first) segment deleted every stored frame at or after
	// the plan's ClearFrom, which is progress a continuation need not redo.
	cleared bool
	written int // frames durably written, the earlier segments' included
	buf     []domain.Frame
	renews  int
}

// errStopMargin is the cause of a job context the stop margin ended (and
// not the invocation's end).
var errStopMargin = errors.New("worker: the stop margin before the invocation's deadline was reached")

// execute runs the claimed job under a job context that the clock ends
// StopMargin before the invocation's deadline.
func (r *run) execute(ctx context.Context) Outcome {
	jobCtx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(errStopMargin) }
	defer cancel()
	r.buf = make([]domain.Frame, 0, r.w.o.FrameBatch)
	if d, ok := ctx.Deadline(); ok {
		stopIn := d.Add(-r.w.o.StopMargin).Sub(r.w.o.Clock.Now())
		if stopIn <= 0 {
			cancel()
		} else {
			t := r.w.o.Clock.AfterFunc(stopIn, cancel)
			defer t.Stop()
		}
	}
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
	if r.segment > 0 {
		// A continuation: the first segment recorded the plan and cleared;
		// the row's progress and clean range are the checkpoint, whose
		// frames are durable (settings cannot change under a tracing lease).
		plan, err := domain.ResumePlan(r.movie)
		if err != nil {
			return fmt.Errorf("segment %d: %w", r.segment, err)
		}
		r.plan = plan
		r.resumed, r.written = r.movie.Progress.FramesWritten, r.movie.Progress.FramesWritten
		tick := r.w.o.Clock.NewTicker(r.w.cadence())
		defer tick.Stop()
		return r.trace(ctx, tick)
	}
	r.plan = domain.PlanTrace(r.movie, r.lease)
	// The plan goes on the row before any frame is touched: CleanBefore drops
	// to ClearFrom, so if this job dies, the next trace retraces its frames.
	if _, err := r.fenced(ctx, func(f domain.JobFence) domain.Command {
		return domain.BeginTrace{JobFence: f, Duration: r.w.o.LeaseDuration, CleanBefore: r.plan.ClearFrom, TotalFrames: r.plan.Frames, PlanFrom: r.plan.From, Kept: r.plan.Kept}
	}); err != nil {
		return err
	}
	tick := r.w.o.Clock.NewTicker(r.w.cadence())
	defer tick.Stop()
	keys, err := r.w.o.Frames.Keys(ctx, r.movieID, r.plan.ClearFrom)
	if err != nil {
		return err
	}
	for len(keys) > 0 {
		n := min(len(keys), r.w.o.FrameBatch)
		if err := r.write(ctx, nil, keys[:n]); err != nil {
			return err
		}
		keys = keys[n:]
		select {
		case <-tick.C():
			if err := r.renew(ctx); err != nil {
				return err
			}
		default:
		}
	}
	r.cleared = true
	r.log.DebugContext(ctx, "frames cleared", slog.Int("clearFrom", r.plan.ClearFrom))
	return r.trace(ctx, tick)
}

// fence is the job's fence at the worker's now; it fails once the worker
// itself knows its lease has expired.
func (r *run) fence() (domain.JobFence, error) {
	now := r.w.o.Clock.Now()
	if !now.Before(r.expires) {
		return domain.JobFence{}, errExpired
	}
	return domain.JobFence{JobID: r.jobID, Now: now}, nil
}

// lost turns a refusal of one of the job's fenced writes into errLeaseLost.
// An invalid input is not a lost lease: it stays an internal error.
func lost(err error) error {
	if code := domain.ErrorCode(err); code != "" && code != domain.CodeInvalid {
		return &errLeaseLost{refusal: err}
	}
	return err
}

// fenced commits a movie-row command guarded by the job fence; a refusal is
// errLeaseLost.
func (r *run) fenced(ctx context.Context, build func(domain.JobFence) domain.Command) (domain.Movie, error) {
	if _, err := r.fence(); err != nil {
		return domain.Movie{}, err
	}
	m, err := r.commit(ctx, func(now time.Time) domain.Command { return build(domain.JobFence{JobID: r.jobID, Now: now}) })
	if err != nil {
		return m, lost(err)
	}
	if m.Lease != nil {
		r.expires = m.Lease.ExpiresAt
	}
	return m, nil
}

// renew heartbeats the lease and publishes the frames written so far. A
// refusal stops the job; a transport failure does not (the lease may still
// be live, and the next fenced write will tell).
func (r *run) renew(ctx context.Context) error {
	_, err := r.fenced(ctx, func(f domain.JobFence) domain.Command {
		return domain.RenewJob{JobFence: f, Duration: r.w.o.LeaseDuration, FramesWritten: r.written}
	})
	var ll *errLeaseLost
	switch {
	case err == nil:
		r.renews++
	case errors.As(err, &ll) || errors.Is(err, errExpired) || ctx.Err() != nil:
		return err
	default:
		r.log.WarnContext(ctx, "lease renewal failed; continuing while the lease lasts",
			slog.String("error", err.Error()), slog.Time("leaseExpiresAt", r.expires))
	}
	return nil
}

// commit commits a command on the movie row, retrying conflicts (the
// command is rebuilt with a fresh now on every attempt).
func (r *run) commit(ctx context.Context, build func(now time.Time) domain.Command) (domain.Movie, error) {
	for attempt := 0; ; attempt++ {
		m, err := r.w.o.Movies.Commit(ctx, r.movieID, build(r.w.o.Clock.Now()))
		if err == nil || !errors.Is(err, domain.ErrConflict) || attempt >= r.w.o.ConflictRetries || !pause(ctx, r.w.o.Clock, r.w.o.Backoff(attempt+1)) {
			return m, err
		}
	}
}

// pause waits d on the clock; false if ctx ended first.
func pause(ctx context.Context, c clock.Clock, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

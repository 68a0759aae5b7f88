package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
)

// finish publishes the terminal state for the job's result, if it still can.
func (r *run) finish(ctx, jobCtx context.Context, err error) Outcome {
	var ll *errLeaseLost
	if err != nil && jobCtx.Err() != nil && ctx.Err() == nil && !errors.As(err, &ll) && !errors.Is(err, errExpired) {
		if _, safe := tracer.SummaryOf(err); !safe {
			// The stop margin before the deadline: keep what was traced.
			if ferr := r.flush(ctx); ferr != nil {
				err = ferr
			} else if r.written == r.plan.Frames {
				err = nil // everything is durable: the job is done
			} else if r.w.o.Queue != nil && r.written > r.resumed {
				return r.handOff(ctx)
			}
		}
	}
	switch {
	case err == nil:
		if cerr := r.terminal(ctx, func(f domain.JobFence) domain.Command {
			return domain.CompleteJob{Job: r.lease, Now: f.Now, FramesWritten: r.written}
		}); cerr != nil {
			return r.unpublished(ctx, cerr)
		}
		r.log.InfoContext(ctx, "job traced", slog.Int("frames", r.written), slog.Int("renewals", r.renews))
		return Outcome{Result: ResultTraced, FramesWritten: r.written}
	case errors.As(err, &ll) || errors.Is(err, errExpired):
		return r.unpublished(ctx, err)
	case ctx.Err() != nil:
		// The invocation itself ended: nothing can be written any more.
		r.log.ErrorContext(ctx, "invocation ended during the job; its lease will go stale",
			slog.Int("framesWritten", r.written), slog.String("error", err.Error()))
		return Outcome{Result: ResultAbandoned, FramesWritten: r.written, Err: err}
	}

	summary := r.summary(jobCtx, err)
	attrs := []any{slog.String("error", err.Error()), slog.Int("framesWritten", r.written), slog.Int("totalFrames", r.plan.Frames)}
	var pe *panicError
	if errors.As(err, &pe) {
		attrs = append(attrs, slog.String("stack", string(pe.stack)))
	}
	r.log.ErrorContext(ctx, "job failed", attrs...)
	if ferr := r.terminal(ctx, func(f domain.JobFence) domain.Command {
		return domain.FailJob{Job: r.lease, Now: f.Now, FramesWritten: r.written, Summary: summary}
	}); ferr != nil {
		return r.unpublished(ctx, ferr)
	}
	return Outcome{Result: ResultFailed, FramesWritten: r.written, Summary: domain.SanitizeSummary(summary), Err: err}
}

// summary is the user-facing failure summary for err (docs/worker.md,
// "Failure summaries").
func (r *run) summary(jobCtx context.Context, err error) string {
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
	return summary
}

// terminal commits the job's terminal write. A write that failed (not a
// refusal: the lease may still be this job's) is retried with backoff as
// long as the fence still holds by the worker's clock and the invocation
// has time left; a refusal or an expired lease ends it at once.
func (r *run) terminal(ctx context.Context, build func(domain.JobFence) domain.Command, row ...*domain.Movie) error {
	for attempt := 1; ; attempt++ {
		m, err := r.fenced(ctx, build)
		if err == nil && len(row) > 0 {
			*row[0] = m
		}
		var ll *errLeaseLost
		if err == nil || errors.As(err, &ll) || errors.Is(err, errExpired) || ctx.Err() != nil {
			return err
		}
		r.log.WarnContext(ctx, "terminal write failed; retrying while the lease lasts",
			slog.Int("attempt", attempt), slog.String("error", err.Error()), slog.Time("leaseExpiresAt", r.expires))
		if !pause(ctx, r.w.o.Clock, r.w.o.Backoff(attempt)) {
			return err
		}
	}
}

// unpublished reports a job whose terminal state could not be published.
func (r *run) unpublished(ctx context.Context, err error) Outcome {
	var ll *errLeaseLost
	if errors.As(err, &ll) || errors.Is(err, errExpired) {
		code := "expired"
		if ll != nil {
			code = string(domain.ErrorCode(ll.refusal))
		}
		r.log.WarnContext(ctx, "lease lost: the job stopped and published nothing",
			slog.String("code", code), slog.Int("framesWritten", r.written))
		return Outcome{Result: ResultLeaseLost, FramesWritten: r.written, Err: err}
	}
	r.log.ErrorContext(ctx, "terminal write failed; the job's lease will go stale",
		slog.String("error", err.Error()), slog.Int("framesWritten", r.written))
	return Outcome{Result: ResultAbandoned, FramesWritten: r.written, Err: err}
}

// handOff ends this segment at its checkpoint (every frame traced so far is
// durable) and enqueues the next segment. A segment that made no progress
// is not handed off (the job would never end): it fails as out of time.
func (r *run) handOff(ctx context.Context) Outcome {
	var row domain.Movie
	if err := r.terminal(ctx, func(f domain.JobFence) domain.Command {
		return domain.HandOffJob{JobFence: f, Segment: r.segment, Duration: r.w.o.LeaseDuration, FramesWritten: r.written,
			CleanBefore: r.plan.FrameAt(r.written)}
	}, &row); err != nil {
		return r.unpublished(ctx, err)
	}
	next := events.TraceJob{MovieID: r.movieID, JobID: r.jobID, FromFrame: r.lease.FromFrame, Version: row.Version, Segment: r.segment + 1}
	for attempt := 1; ; attempt++ {
		err := r.w.o.Queue.Continue(ctx, next)
		if err == nil {
			break
		}
		if attempt > r.w.o.ConflictRetries || !pause(ctx, r.w.o.Clock, r.w.o.Backoff(attempt)) {
			// The lease stays unclaimed until it goes stale; the sweeper then
			// ends the job visibly (FinalizeStaleTrace).
			r.log.ErrorContext(ctx, "continuation not sent; the job will be finalised when its lease goes stale",
				slog.Int("segment", next.Segment), slog.String("error", err.Error()))
			return Outcome{Result: ResultAbandoned, FramesWritten: r.written, Err: err}
		}
	}
	r.log.InfoContext(ctx, "segment handed off", slog.Int("segment", r.segment), slog.Int("framesWritten", r.written),
		slog.Int("totalFrames", r.plan.Frames))
	return Outcome{Result: ResultHandedOff, FramesWritten: r.written}
}

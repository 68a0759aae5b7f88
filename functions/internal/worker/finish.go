package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
)

// lastWritesBudget bounds the segment's last writes (flush, hand-off or
// terminal write, continuation) once the stop margin stopped the tracer.
const lastWritesBudget = 5 * time.Second

// finish publishes the terminal state for the job's result, if it still can.
//
// When the stop margin stopped the tracer, the segment's last writes run on
// a context detached from the invocation's (context.WithoutCancel, with
// lastWritesBudget), as requeue does: a flush that overruns the invocation
// (a loaded machine) must still hand the job on rather than abandon it to
// sit "tracing" until its lease goes stale (issue 20 item 7). The fence makes
// that safe: every write is refused once the lease is no longer this job's.
func (r *run) finish(ctx, jobCtx context.Context, err error) Outcome {
	var ll *errLeaseLost
	if err != nil && context.Cause(jobCtx) == errStopMargin && !errors.As(err, &ll) && !errors.Is(err, errExpired) {
		if _, safe := tracer.SummaryOf(err); !safe {
			if d, ok := ctx.Deadline(); ok {
				r.deadline = d
			}
			dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			defer cancel()
			t := r.w.o.Clock.AfterFunc(lastWritesBudget, cancel)
			defer t.Stop()
			ctx = dctx
			// The stop margin before the deadline: keep what was traced.
			if ferr := r.flush(ctx); ferr != nil {
				err = ferr
			} else if r.written == r.plan.Frames {
				err = nil // everything is durable: the job is done
			} else if r.w.o.Queue != nil && r.progressed() {
				return r.handOff(ctx)
			}
		}
	}
	switch {
	case err == nil:
		quality := r.quality(ctx)
		if cerr := r.terminal(ctx, func(f domain.JobFence) domain.Command {
			return domain.CompleteJob{Job: r.lease, Now: f.Now, FramesWritten: r.written, Quality: quality}
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
		return Outcome{Result: ResultStranded, FramesWritten: r.written, Err: err}
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

// qualityPage is how many frames quality reads per page.
const qualityPage = 1000

// quality derives each marker's quality (domain.TraceQuality) from the
// stored frames of the trim, the ones this job wrote and those a retrace
// kept. It is best effort: a read that fails leaves the job's record
// without quality (logged), it never fails a traced job.
func (r *run) quality(ctx context.Context) []domain.MarkerQuality {
	trim, markers := r.movie.Settings.Trim, r.movie.Settings.Markers
	var q []domain.MarkerQuality
	for from := trim.Start; from < trim.End; {
		page, next, err := r.w.o.Frames.Page(ctx, r.movieID, from, qualityPage)
		if err != nil {
			r.log.WarnContext(ctx, "could not read the traced frames for the trace's quality", slog.String("error", err.Error()))
			return nil
		}
		end := len(page)
		for end > 0 && page[end-1].Index >= trim.End {
			end--
		}
		q = domain.AddQuality(q, domain.TraceQuality(markers, page[:end]))
		if next == nil || end < len(page) {
			break
		}
		from = *next
	}
	return q
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
	return Outcome{Result: ResultStranded, FramesWritten: r.written, Err: err}
}

// progressed reports whether this segment made progress a continuation
// need not redo: frames traced, or (the first segment) the clearing done,
// which on a loaded machine or a long movie can take a whole invocation.
// A segment that did neither is never handed off: the job would never end.
func (r *run) progressed() bool {
	return r.written > r.resumed || (r.segment == 0 && r.cleared)
}

// handOff ends this segment at its checkpoint (every frame traced so far is
// durable) and enqueues the next segment. A segment that made no progress
// (progressed) is not handed off (the job would never end): it fails as out
// of time.
func (r *run) handOff(ctx context.Context) Outcome {
	var row domain.Movie
	if err := r.terminal(ctx, func(f domain.JobFence) domain.Command {
		return domain.HandOffJob{JobFence: f, Segment: r.segment, Duration: r.w.o.LeaseDuration, FramesWritten: r.written,
			CleanBefore: r.plan.FrameAt(r.written)}
	}, &row); err != nil {
		return r.unpublished(ctx, err)
	}
	next := events.TraceJob{MovieID: r.movieID, JobID: r.jobID, FromFrame: r.lease.FromFrame, Version: row.Version, Segment: r.segment + 1}
	if err := r.sendContinuation(ctx, next); err != nil {
		return r.notContinued(ctx, next, err)
	}
	r.log.InfoContext(ctx, "segment handed off", slog.Int("segment", r.segment), slog.Int("framesWritten", r.written),
		slog.Int("totalFrames", r.plan.Frames))
	return Outcome{Result: ResultHandedOff, FramesWritten: r.written}
}

// maxSendAttempts bounds the continuation's sends when the invocation has
// no deadline (or the backoff is zero, as in tests).
const maxSendAttempts = 20

// sendContinuation sends the next segment's message, retrying a failed send
// with backoff while the invocation has time left for it and, after it,
// half the stop margin (the visible failure's two writes, notContinued).
func (r *run) sendContinuation(ctx context.Context, next events.TraceJob) error {
	for attempt := 1; ; attempt++ {
		err := r.w.o.Queue.Continue(ctx, next)
		if err == nil {
			return nil
		}
		r.log.WarnContext(ctx, "continuation not sent; retrying while time remains",
			slog.Int("segment", next.Segment), slog.Int("attempt", attempt), slog.String("error", err.Error()))
		wait := r.w.o.Backoff(attempt)
		d, ok := ctx.Deadline()
		if !r.deadline.IsZero() {
			d, ok = r.deadline, true // the invocation's, before finish detached ctx
		}
		if ok && d.Sub(r.w.o.Clock.Now().Add(wait)) < r.w.o.StopMargin/2 {
			return err
		}
		if attempt >= maxSendAttempts || !pause(ctx, r.w.o.Clock, wait) {
			return err
		}
	}
}

// ContinuationFailedSummary is the failure summary of a job whose next
// segment could not be enqueued: its frames so far are durable and clean
// (below the checkpoint), so a retrace with the same settings and markers
// resumes there (domain.RestartOf; the page starts the retrace there).
func ContinuationFailedSummary(written, total int) string {
	return fmt.Sprintf("The trace could not be continued after %d of %d frames; they are kept, and Retrace resumes after them unless the markers or settings change.", written, total)
}

// notContinued ends, visibly and at once, a job whose continuation could
// not be sent: this worker claims the next segment itself (so that a
// message that did get through after all is a no-op) and fails the job
// with a safe summary. If that segment is already claimed, the message did
// get through and a continuation runs the job. If even this fails, the
// lease stays unclaimed until it goes stale and the sweeper ends the job
// (FinalizeStaleTrace).
func (r *run) notContinued(ctx context.Context, next events.TraceJob, sendErr error) Outcome {
	r.log.ErrorContext(ctx, "continuation not sent; failing the job", slog.Int("segment", next.Segment), slog.String("error", sendErr.Error()))
	claimed, err := r.commit(ctx, func(now time.Time) domain.Command {
		return domain.ClaimSegment{JobID: r.jobID, Segment: next.Segment, Token: token.New(), Now: now, Duration: r.w.o.LeaseDuration}
	})
	switch {
	case domain.ErrorCode(err) == domain.CodeAlreadyClaimed:
		r.log.InfoContext(ctx, "the continuation was delivered after all; a later segment runs the job", slog.Int("segment", next.Segment))
		return Outcome{Result: ResultHandedOff, FramesWritten: r.written}
	case err == nil && claimed.Lease != nil:
		r.lease, r.expires, r.segment = *claimed.Lease, claimed.Lease.ExpiresAt, next.Segment
	case err == nil:
		err = errors.New("claimed row without the claimed lease")
		fallthrough
	default:
		r.log.ErrorContext(ctx, "the job could not be failed; it will be finalised when its lease goes stale",
			slog.Int("segment", next.Segment), slog.String("error", err.Error()))
		return Outcome{Result: ResultStranded, FramesWritten: r.written, Err: errors.Join(sendErr, err)}
	}
	summary := ContinuationFailedSummary(r.written, r.plan.Frames)
	if err := r.terminal(ctx, func(f domain.JobFence) domain.Command {
		return domain.FailJob{Job: r.lease, Now: f.Now, FramesWritten: r.written, Summary: summary}
	}); err != nil {
		return r.unpublished(ctx, err)
	}
	return Outcome{Result: ResultFailed, FramesWritten: r.written, Summary: domain.SanitizeSummary(summary), Err: sendErr}
}

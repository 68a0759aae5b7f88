// Package tracer is the tracing algorithm behind the worker: a small
// interface (a movie and its trace plan in, frames out through a callback),
// the SafeError that carries a user-facing failure summary out of it, and
// Synthetic, the deterministic built-in tracer.
//
// Synthetic does not look at any video. It moves each marker along a smooth
// synthetic path, so the whole pipeline (claim, clear, fenced frame writes,
// renewal, terminal state) can run and be tested end to end without a
// computer-vision model. The real tracer of the existing system implements
// the same interface.
package tracer

import (
	"context"
	"errors"

	"github.com/movietrace/tracinglocks/domain"
)

// Tracer traces the frames of one plan.
//
// Trace calls emit once per frame of the plan, in plan order:
// plan.FrameAt(0), plan.FrameAt(1), ... plan.FrameAt(plan.Frames-1), each
// with one point per marker it followed. The worker sets the frame's JobID.
// emit returns an error when the worker wants the trace to stop (the lease
// was lost, time ran out): Trace must then return promptly, with that error
// or its own. Trace must also return promptly once ctx is done.
//
// A failure the user should understand is returned as a *SafeError; any
// other error (or a panic) is reported to the user as an internal error,
// and only the logs see its text.
type Tracer interface {
	Trace(ctx context.Context, movie domain.Movie, plan domain.TracePlan, emit func(domain.Frame) error) error
}

// Func adapts a function to the Tracer interface.
type Func func(ctx context.Context, movie domain.Movie, plan domain.TracePlan, emit func(domain.Frame) error) error

// Trace calls f.
func (f Func) Trace(ctx context.Context, movie domain.Movie, plan domain.TracePlan, emit func(domain.Frame) error) error {
	return f(ctx, movie, plan, emit)
}

// SafeError is a tracing failure with a user-facing summary.
//
// Summary is shown to the user and stored on the movie row and in the audit
// table, so it must be one short sentence with no path, stack, URL, ID or
// secret (it is sanitized again with domain.SanitizeSummary before it is
// stored). Err is the full cause, for the logs only.
type SafeError struct {
	Summary string
	Err     error
}

// Safe returns a SafeError with the summary and the cause.
func Safe(summary string, cause error) *SafeError { return &SafeError{Summary: summary, Err: cause} }

func (e *SafeError) Error() string {
	if e.Err == nil {
		return e.Summary
	}
	return e.Summary + ": " + e.Err.Error()
}

func (e *SafeError) Unwrap() error { return e.Err }

// SummaryOf returns the user-facing summary carried by err (the outermost
// SafeError in its chain), and whether it had one.
func SummaryOf(err error) (string, bool) {
	var se *SafeError
	if errors.As(err, &se) && se.Summary != "" {
		return se.Summary, true
	}
	return "", false
}

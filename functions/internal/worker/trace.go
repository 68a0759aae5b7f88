package worker

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"k8s.io/utils/clock"

	"github.com/movietrace/tracinglocks/domain"
)

// abortWait bounds how long a stopped tracer is waited for.
const abortWait = 2 * time.Second

// trace runs the tracer in its own goroutine and writes what it emits from
// this one, so that at most one fenced write of the job is in flight and
// renewals happen on time even while the tracer is busy with one frame.
// tick is the renewal ticker. The tracer gets the rest of the plan, from the
// first frame not yet written.
//
// When ctx ends (the stop margin before the deadline, or the invocation),
// the tracer is stopped and what it emitted stays in r.buf: finish flushes
// it with the invocation's context if it can.
func (r *run) trace(ctx context.Context, tick clock.Ticker) error {
	batch := r.w.o.FrameBatch
	rest := r.plan
	rest.From, rest.Frames = r.plan.FrameAt(r.written), r.plan.Frames-r.written
	tctx, stop := context.WithCancel(ctx)
	defer stop()
	frames := make(chan domain.Frame, batch)
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- &panicError{value: p, stack: debug.Stack()}
			}
		}()
		done <- r.w.o.Tracer.Trace(tctx, r.movie, rest, func(f domain.Frame) error {
			select {
			case frames <- f:
				return nil
			case <-tctx.Done():
				return tctx.Err()
			}
		})
	}()
	// drain accepts what the tracer emitted before it returned.
	drain := func() error {
		for {
			select {
			case f := <-frames:
				if err := r.accept(f); err != nil {
					return err
				}
			default:
				return nil
			}
		}
	}
	// abort stops the tracer and waits a little for it: it must not emit
	// into a job that is over (emit fails from now on anyway).
	abort := func(err error) error {
		stop()
		select {
		case <-done:
			// Keep what it emitted before it stopped (a bad frame ends the
			// drain; the job fails on it when it is emitted again).
			_ = drain()
		case <-r.w.o.Clock.After(abortWait):
			r.log.WarnContext(ctx, "tracer did not return within 2 s of being stopped")
		}
		return err
	}
	accept := func(f domain.Frame) error {
		if err := r.accept(f); err != nil {
			return err
		}
		if len(r.buf) == batch {
			return r.flush(ctx)
		}
		return nil
	}
	for {
		select {
		case f := <-frames:
			if err := accept(f); err != nil {
				return abort(err)
			}
		case err := <-done:
			// Everything Trace emitted is in the channel: emit returned.
			// Keep every valid frame it emitted, also when it failed.
			derr := drain()
			if ferr := r.flush(ctx); ferr != nil {
				return ferr
			}
			if derr != nil {
				return derr
			}
			if err != nil {
				return fmt.Errorf("tracer: %w", err)
			}
			if r.written != r.plan.Frames {
				return fmt.Errorf("tracer returned after %d of %d planned frames", r.written, r.plan.Frames)
			}
			return nil
		case <-tick.C():
			// Progress counts durable frames: flush what is buffered first.
			if err := r.flush(ctx); err != nil {
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
func (r *run) accept(f domain.Frame) error {
	i := r.written + len(r.buf)
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
	r.buf = append(r.buf, f)
	return nil
}

// flush writes the buffered frames, FrameBatch per fenced write.
func (r *run) flush(ctx context.Context) error {
	for len(r.buf) > 0 {
		n := min(len(r.buf), r.w.o.FrameBatch)
		if err := r.write(ctx, r.buf[:n], nil); err != nil {
			return err
		}
		r.written += n
		r.buf = r.buf[n:]
	}
	r.buf = r.buf[:0]
	return nil
}

// write is one fenced write of frame puts or deletes, retried on conflicts.
func (r *run) write(ctx context.Context, puts []domain.Frame, deletes []int) error {
	for attempt := 0; ; attempt++ {
		f, err := r.fence()
		if err != nil {
			return err
		}
		err = r.w.o.Frames.WriteFenced(ctx, r.movieID, f, puts, deletes)
		if err == nil {
			return nil
		}
		if err := lost(err); err != nil && !errors.Is(err, domain.ErrConflict) {
			return err
		}
		if attempt >= r.w.o.ConflictRetries || !pause(ctx, r.w.o.Clock, r.w.o.Backoff(attempt+1)) {
			return err
		}
	}
}

package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/emf"
)

// The worker's business metrics (EMF, package emf): no ID of any kind is a
// dimension or a member. The trace outcomes of the movie rows (started,
// completed, failed, cancelled, abandoned) are the stream processor's: it
// sees every terminal write, the sweeper's and the user's included. The
// worker counts what only it sees: claim refusals by reason, and per claimed
// segment its outcome, lease conflicts, continuations and frames traced.

// claimRefused counts a refused claim by its code.
func (w *Worker) claimRefused(ctx context.Context, code domain.Code) {
	w.emit(ctx, map[string]string{emf.DimensionReason: emf.Reason(string(code), emf.ClaimRefusalReasons)},
		emf.Metric{Name: emf.ClaimRefusals, Value: 1, Unit: emf.Count})
}

// segmentEnded records a claimed segment that ran for elapsed on the
// worker's clock.
func (r *run) segmentEnded(ctx context.Context, out Outcome, elapsed time.Duration) {
	w := r.w
	w.emit(ctx, map[string]string{emf.DimensionOutcome: string(out.Result)},
		emf.Metric{Name: emf.WorkerSegments, Value: 1, Unit: emf.Count})
	if out.Result == ResultLeaseLost {
		reason := "lease_lost"
		if errors.Is(out.Err, errExpired) {
			reason = "expired"
		}
		w.emit(ctx, map[string]string{emf.DimensionFunction: string(emf.Worker), emf.DimensionReason: reason},
			emf.Metric{Name: emf.LeaseConflicts, Value: 1, Unit: emf.Count})
	}
	frames := max(out.FramesWritten-r.resumed, 0)
	metrics := []emf.Metric{
		{Name: emf.ContinuationSegments, Value: float64(min(r.segment, 1)), Unit: emf.Count},
		{Name: emf.FramesTraced, Value: float64(frames), Unit: emf.Count},
	}
	if frames > 0 && elapsed > 0 {
		metrics = append(metrics, emf.Metric{Name: emf.FramesPerSecond, Value: float64(frames) / elapsed.Seconds(), Unit: emf.CountPerSecond})
	}
	w.emit(ctx, nil, metrics...)
}

func (w *Worker) emit(ctx context.Context, dims map[string]string, metrics ...emf.Metric) {
	if w.o.Metrics == nil {
		return
	}
	if err := w.o.Metrics.Emit(dims, metrics...); err != nil {
		w.o.Log.WarnContext(ctx, "could not write metrics", slog.String("error", err.Error()))
	}
}

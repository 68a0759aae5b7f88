package streamproc

import (
	"context"
	"log/slog"

	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/emf"
)

// emitMetrics writes the batch's business metrics as one EMF record. A
// batch Lambda retries is counted again: the dashboard shows work done,
// which a retry repeats (the audit table holds each event once).
func (h *Handler) emitMetrics(ctx context.Context, counts map[events.EventType]int, poison int) {
	if h.opts.Metrics == nil {
		return
	}
	err := h.opts.Metrics.Emit(nil,
		emf.Metric{Name: emf.TracesStarted, Value: float64(counts[events.TracingStarted]), Unit: emf.Count},
		emf.Metric{Name: emf.TracesCompleted, Value: float64(counts[events.TracingCompleted]), Unit: emf.Count},
		emf.Metric{Name: emf.TracesFailed, Value: float64(counts[events.TracingFailed]), Unit: emf.Count},
		emf.Metric{Name: emf.TracesCancelled, Value: float64(counts[events.TracingCancelled]), Unit: emf.Count},
		emf.Metric{Name: emf.TracesAbandoned, Value: float64(counts[events.TracingAbandoned]), Unit: emf.Count},
		emf.Metric{Name: emf.PoisonRecords, Value: float64(poison), Unit: emf.Count},
	)
	if err != nil {
		h.log.WarnContext(ctx, "could not write metrics", slog.String("error", err.Error()))
	}
}

package httpapi

import (
	"net/http"

	"github.com/movietrace/tracinglocks/domain"
)

// POST /movies/{id}/traces {"fromFrame": n}: start (or retrace from n). The
// one conditional write replaces the caller's analysis lease (Lease-Id, if
// sent) with the new tracing lease and sets status tracing; the stream
// processor then enqueues the job. Without a Lease-Id the trace starts only
// when no lease is live.
func (h *Handler) startTrace(w http.ResponseWriter, r *http.Request, c call) error {
	leaseID, err := leaseHeader(r)
	if err != nil {
		return err
	}
	body, err := readBody(w, r, true)
	if err != nil {
		return err
	}
	from, err := decodeTrace(body)
	if err != nil {
		return err
	}
	jobID := h.cfg.NewID()
	m, err := h.cfg.Movies.Commit(r.Context(), c.movieID, domain.StartTrace{
		LeaseID: leaseID, JobID: jobID, User: c.user, FromFrame: from,
		Now: c.now, Duration: h.cfg.LeaseDuration,
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, TraceStarted{JobID: jobID, Status: m.Status, Version: m.Version})
}

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

// POST /movies/{id}/traces/cancel: the user who started the running trace
// cancels it. The route reads the movie (to name the job and its progress),
// then makes one conditional write, domain.CancelTrace, whose precondition
// is that this very job still holds the live tracing lease and the caller
// started it. The worker stops at its next fenced write; the frames it
// wrote are kept. 200 with the metadata (status tracing_cancelled).
func (h *Handler) cancelTrace(w http.ResponseWriter, r *http.Request, c call) error {
	m, err := h.cfg.Movies.Get(r.Context(), c.movieID)
	if err != nil {
		return err
	}
	job := m.LiveLease(c.now)
	if job == nil || job.Kind != domain.LeaseTracing {
		return &domain.Error{Code: domain.CodeNotTracing, Message: "no trace is running"}
	}
	done, err := h.cfg.Movies.Commit(r.Context(), c.movieID, domain.CancelTrace{
		Job: *job, User: c.user, Now: c.now, FramesWritten: m.Progress.FramesWritten,
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, detail(done, c.now, c.user))
}

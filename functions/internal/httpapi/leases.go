package httpapi

import (
	"net/http"

	"github.com/movietrace/tracinglocks/domain"
)

// POST /movies/{id}/analysis-lease: open Analyze. The 201 is the only
// response that carries the lease ID; a 409 lease_held names the holder so
// the page can go view-only.
func (h *Handler) openAnalysis(w http.ResponseWriter, r *http.Request, c call) error {
	leaseID := h.cfg.NewID()
	m, err := h.cfg.Movies.Commit(r.Context(), c.movieID, domain.OpenAnalysis{
		LeaseID: leaseID, User: c.user, Now: c.now, Duration: h.cfg.LeaseDuration,
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, LeaseGrant{
		LeaseID:      leaseID,
		ExpiresAt:    formatTime(m.Lease.ExpiresAt),
		LeaseSeconds: int(h.cfg.LeaseDuration.Seconds()),
		IdleSeconds:  int(h.cfg.EditIdle.Seconds()),
	})
}

// POST /movies/{id}/analysis-lease/release-request: a viewer asks the
// editor to release the movie (domain.AskRelease). No body, no lease ID:
// the request names the asker only. 200 with the metadata, whose lock shows
// the request to everyone, the editor included. Like the cancel, it reads
// no body.
func (h *Handler) askRelease(w http.ResponseWriter, r *http.Request, c call) error {
	m, err := h.cfg.Movies.Commit(r.Context(), c.movieID, domain.AskRelease{User: c.user, Now: c.now})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, detail(m, c.now, c.user))
}

// PUT /movies/{id}/analysis-lease: heartbeat, bound (like the edits) to the
// lease's user.
func (h *Handler) heartbeat(w http.ResponseWriter, r *http.Request, c call) error {
	leaseID, err := leaseHeader(r)
	if err != nil {
		return err
	}
	m, err := h.cfg.Movies.Commit(r.Context(), c.movieID, domain.Heartbeat{
		LeaseID: leaseID, UserID: c.user.ID, Now: c.now, Duration: h.cfg.LeaseDuration,
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, LeaseRenewal{ExpiresAt: formatTime(m.Lease.ExpiresAt)})
}

// DELETE /movies/{id}/analysis-lease: release with the Lease-Id header.
func (h *Handler) release(w http.ResponseWriter, r *http.Request, c call) error {
	leaseID, err := leaseHeader(r)
	if err != nil {
		return err
	}
	return h.releaseLease(w, r, c, leaseID)
}

// POST /movies/{id}/analysis-lease/release: the same for
// navigator.sendBeacon, which can send a body ({"leaseId": "..."}, of any
// content type) but no headers. The Lease-Id header wins when both are sent.
func (h *Handler) releaseBeacon(w http.ResponseWriter, r *http.Request, c call) error {
	leaseID, err := leaseHeader(r)
	if err != nil {
		return err
	}
	body, err := readBody(w, r, false)
	if err != nil {
		return err
	}
	fromBody, err := decodeRelease(body)
	if err != nil {
		return err
	}
	if leaseID == "" {
		if fromBody != "" && !domain.ValidLeaseID(fromBody) {
			return domain.Invalid("leaseId", "must be 32 lowercase hex digits")
		}
		leaseID = fromBody
	}
	return h.releaseLease(w, r, c, leaseID)
}

// releaseLease is 204 whether or not there was anything to release: the
// store's conditional write only ever removes the caller's own live
// analysis lease, never a tracing lease or another browser's.
func (h *Handler) releaseLease(w http.ResponseWriter, r *http.Request, c call, leaseID string) error {
	if _, err := h.cfg.Movies.Release(r.Context(), c.movieID, domain.Release{LeaseID: leaseID, Now: c.now}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

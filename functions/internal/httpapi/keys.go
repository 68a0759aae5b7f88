package httpapi

import (
	"net/http"

	"github.com/movietrace/tracinglocks/domain"
)

// PUT /movies/{id}/keys {"markerId", "frame", "x", "y"}: the lease holder
// corrects a marker's point on a traced frame, which becomes a key frame of
// that marker (domain.CorrectPoint); a retrace from that frame (POST
// /movies/{id}/traces {"fromFrame": frame}) keeps the frames before it and
// re-tracks the rest from the corrected point. The route reads the movie,
// resolves the correction against it (domain.CorrectOn) and makes one
// conditional write that holds only on that very row; when the row changed
// in between (settings_changed) it reads and resolves again, a few times.
// 200 with the metadata.
func (h *Handler) correctPoint(w http.ResponseWriter, r *http.Request, c call) error {
	leaseID, err := leaseHeader(r)
	if err != nil {
		return err
	}
	body, err := readBody(w, r, true)
	if err != nil {
		return err
	}
	key, err := decodeKey(body)
	if err != nil {
		return err
	}
	// The input's own checks before any read (the lease ID, the key).
	if err := (domain.CorrectPoint{LeaseID: leaseID, Key: key}).Validate(); err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		m, err := h.cfg.Movies.Get(r.Context(), c.movieID)
		if err != nil {
			return err
		}
		cmd, err := domain.CorrectOn(m, leaseID, c.user.ID, c.now, key)
		if err != nil {
			return err
		}
		done, err := h.cfg.Movies.Commit(r.Context(), c.movieID, cmd)
		if domain.ErrorCode(err) == domain.CodeSettingsChanged && attempt < correctAttempts {
			continue
		}
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, detail(done, c.now, c.user))
	}
}

// correctAttempts bounds the read-resolve-write rounds of a correction.
const correctAttempts = 3

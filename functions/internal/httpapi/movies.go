package httpapi

import (
	"cmp"
	"log/slog"
	"net/http"
	"slices"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
)

// GET /movies: every movie with its status and its live lease's holder.
func (h *Handler) listMovies(w http.ResponseWriter, r *http.Request, c call) error {
	movies, malformed, err := h.cfg.Movies.List(r.Context())
	if err != nil {
		return err
	}
	// One bad row must not hide every movie: list the rest, log each.
	for _, bad := range malformed {
		h.cfg.Logger.LogAttrs(r.Context(), slog.LevelError, "malformed movie row left out of the list",
			slog.String("requestId", stateOf(r).requestID), slog.String("movieId", bad.MovieID),
			slog.String("error", events.RedactIDs(bad.Error())))
	}
	// A deleted movie is gone for its users at once; the sweeper is still
	// removing its files (purge).
	movies = slices.DeleteFunc(movies, func(m domain.Movie) bool { return m.Status == domain.StatusDeleting })
	slices.SortFunc(movies, func(a, b domain.Movie) int {
		return cmp.Or(cmp.Compare(a.Title, b.Title), cmp.Compare(a.ID, b.ID))
	})
	out := MovieList{Movies: make([]MovieSummary, len(movies))}
	for i, m := range movies {
		out.Movies[i] = summary(m, c.now, c.user)
	}
	return writeJSON(w, http.StatusOK, out)
}

// GET /movies/{id}: the metadata Analyze polls.
func (h *Handler) getMovie(w http.ResponseWriter, r *http.Request, c call) error {
	m, err := h.cfg.Movies.Get(r.Context(), c.movieID)
	if err != nil {
		return err
	}
	if m.Status == domain.StatusDeleting {
		return &domain.Error{Code: domain.CodeNotFound, Message: domain.NoVideoMessage(m)}
	}
	return writeJSON(w, http.StatusOK, detail(m, c.now, c.user))
}

// leaseHeader returns the Lease-Id header: "" when absent, a 400 when sent
// twice, a 422 when it cannot be a lease ID.
func leaseHeader(r *http.Request) (string, error) {
	vs := r.Header.Values(HeaderLeaseID)
	switch {
	case len(vs) == 0:
		return "", nil
	case len(vs) > 1:
		return "", &malformed{field: HeaderLeaseID, reason: "must be sent once"}
	case vs[0] == "":
		return "", nil
	case !domain.ValidLeaseID(vs[0]):
		return "", domain.Invalid(HeaderLeaseID, "must be 32 lowercase hex digits")
	}
	return vs[0], nil
}

// edit runs one settings edit: the lease from the header, the value from
// the body, one conditional write, and the new metadata from the row the
// store returns (no second read).
func (h *Handler) edit(w http.ResponseWriter, r *http.Request, c call, cmd func(leaseID string, body []byte) (domain.Command, error)) error {
	leaseID, err := leaseHeader(r)
	if err != nil {
		return err
	}
	body, err := readBody(w, r, true)
	if err != nil {
		return err
	}
	command, err := cmd(leaseID, body)
	if err != nil {
		return err
	}
	m, err := h.cfg.Movies.Commit(r.Context(), c.movieID, command)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, detail(m, c.now, c.user))
}

// PUT /movies/{id}/markers
func (h *Handler) editMarkers(w http.ResponseWriter, r *http.Request, c call) error {
	return h.edit(w, r, c, func(leaseID string, body []byte) (domain.Command, error) {
		markers, err := decodeMarkers(body)
		return domain.EditMarkers{LeaseID: leaseID, UserID: c.user.ID, Now: c.now, Markers: markers}, err
	})
}

// PUT /movies/{id}/trim
func (h *Handler) editTrim(w http.ResponseWriter, r *http.Request, c call) error {
	return h.edit(w, r, c, func(leaseID string, body []byte) (domain.Command, error) {
		trim, err := decodeTrim(body)
		return domain.EditTrim{LeaseID: leaseID, UserID: c.user.ID, Now: c.now, Trim: trim}, err
	})
}

// PUT /movies/{id}/capture-interval
func (h *Handler) editCaptureInterval(w http.ResponseWriter, r *http.Request, c call) error {
	return h.edit(w, r, c, func(leaseID string, body []byte) (domain.Command, error) {
		n, err := decodeCaptureInterval(body)
		return domain.EditCaptureInterval{LeaseID: leaseID, UserID: c.user.ID, Now: c.now, Interval: n}, err
	})
}

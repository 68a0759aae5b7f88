package ingest

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// ExpireUploads is the sweeper's hook for uploads that never arrived: for
// each movie of movies (a scan the sweeper already made) on which
// domain.ExpireUpload's precondition holds at now, it commits it (one
// conditional write: still awaiting_upload and past its expiry, so an
// ingest that finished meanwhile wins) and deletes whatever file arrived
// too late. It returns how many movies it expired; refusals (ingested or
// deleted meanwhile) are not errors.
func (h *Handler) ExpireUploads(ctx context.Context, movies []domain.Movie, now time.Time) (int, error) {
	expired := 0
	var errs []error
	for _, m := range movies {
		expire := domain.ExpireUpload{Now: now}
		if domain.Decide(expire, &m) != nil {
			continue
		}
		_, err := h.opts.Movies.Commit(ctx, m.ID, expire)
		switch domain.ErrorCode(err) {
		case "":
			if err != nil {
				errs = append(errs, err)
				continue
			}
		case domain.CodeNotAwaitingUpload, domain.CodeNotFound, domain.CodeInvalid:
			continue // ingested, deleted or extended meanwhile
		default:
			errs = append(errs, err)
			continue
		}
		expired++
		h.opts.Log.Info("upload expired", slog.String("movieId", m.ID))
		if err := h.opts.Files.DeleteFiles(ctx, m.ID); err != nil {
			errs = append(errs, err)
		}
	}
	return expired, errors.Join(errs...)
}

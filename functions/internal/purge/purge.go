// Package purge finishes the deletion of movies (issue 20 item 2). DELETE
// /movies/{id} only marks a movie deleting (domain.DeleteMovie, one
// conditional write); the sweeper's hook here then removes, on every sweep
// until it is done, every object under the movie's prefixes in the bucket
// and its traced frames, and finally the row (domain.PurgeMovie). Each step
// is idempotent (deleting what is gone is no error), so a lost answer, a
// failed step or a crash halfway is finished by the next sweep; no request
// carries the clean-up, however long the movie.
//
// The row goes only once the movie has been deleting for Grace: a writer
// that raced the delete (an ingest decoding frame images of a movie deleted
// meanwhile, a worker's last write before its fence refused it) may still
// put an object during that time, and the sweeps in between remove it.
package purge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// Files deletes every object of a movie (s3store.Store).
type Files interface {
	DeleteMovieObjects(ctx context.Context, movieID string) (int, error)
}

// Frames deletes a movie's traced frames (dynamo.FrameStore).
type Frames interface {
	DeleteAll(ctx context.Context, movieID string) (int, error)
}

// Rows deletes a movie's row under a guard (dynamo.MovieStore).
type Rows interface {
	Delete(ctx context.Context, movieID string, g domain.Guard) (domain.Movie, error)
}

// DefaultGrace is longer than any writer can run (a Lambda's 15 minutes).
const DefaultGrace = 16 * time.Minute

// Finisher finishes deletions.
type Finisher struct {
	Files  Files
	Frames Frames
	Rows   Rows
	// Grace: how long a movie stays deleting before its row goes
	// (default DefaultGrace).
	Grace time.Duration
	Log   *slog.Logger // default: discard
}

// Finish removes movie m's objects and frames and, when m has been
// deleting for Grace at now, its row. It reports whether the row is gone.
func (f Finisher) Finish(ctx context.Context, m domain.Movie, now time.Time) (bool, error) {
	if m.Status != domain.StatusDeleting {
		return false, fmt.Errorf("purge: movie %s is %s, not deleting", m.ID, m.Status)
	}
	objects, err := f.Files.DeleteMovieObjects(ctx, m.ID)
	if err != nil {
		return false, fmt.Errorf("delete the files of movie %s: %w", m.ID, err)
	}
	frames, err := f.Frames.DeleteAll(ctx, m.ID)
	if err != nil {
		return false, fmt.Errorf("delete the frames of movie %s: %w", m.ID, err)
	}
	f.log().InfoContext(ctx, "deleting movie cleaned", slog.String("movieId", m.ID), slog.Int("objects", objects), slog.Int("frames", frames))
	if now.Sub(m.UpdatedAt) < f.grace() {
		return false, nil
	}
	_, err = f.Rows.Delete(ctx, m.ID, domain.PurgeMovie{})
	if err != nil && domain.ErrorCode(err) != domain.CodeNotFound {
		return false, fmt.Errorf("delete the row of movie %s: %w", m.ID, err)
	}
	return true, nil
}

// Hook is the sweeper's hook (sweeper.Hook): Finish for every deleting
// movie of the listing. It counts the rows removed; a movie that failed is
// left to the next sweep and its error joined into the result.
func (f Finisher) Hook(ctx context.Context, movies []domain.Movie, now time.Time) (int, error) {
	n := 0
	var errs []error
	for _, m := range movies {
		if m.Status != domain.StatusDeleting {
			continue
		}
		gone, err := f.Finish(ctx, m, now)
		if err != nil {
			errs = append(errs, err)
		}
		if gone {
			n++
		}
	}
	return n, errors.Join(errs...)
}

func (f Finisher) grace() time.Duration {
	if f.Grace <= 0 {
		return DefaultGrace
	}
	return f.Grace
}

func (f Finisher) log() *slog.Logger {
	if f.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return f.Log
}

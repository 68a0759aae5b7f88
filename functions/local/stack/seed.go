package stack

import (
	"context"
	"fmt"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
)

// seed creates each movie unless a movie with its ID exists.
func seed(ctx context.Context, store *dynamo.MovieStore, movies []domain.Movie) error {
	for _, m := range movies {
		err := store.Create(ctx, m)
		if e, ok := domain.AsError(err); ok && e.Code == domain.CodeExists {
			continue // exists: keep it as it is
		}
		if err != nil {
			return fmt.Errorf("seed movie %s: %w", m.ID, err)
		}
	}
	return nil
}

// FailingMovieID is the sample movie whose trace fails at frame 60 (an
// injected failure of the synthetic tracer), to show a failed trace's safe
// summary.
const FailingMovieID = "damaged-footage"

// SampleMovies are the movies `make run` starts with: short enough that a
// whole trace takes seconds at the default frame delay; two have a marker
// placed so that a trace can start at once, and FailingMovieID's trace
// fails.
func SampleMovies(now time.Time) []domain.Movie {
	mk := func(id, title string, frames int, fps float64, markers ...domain.Marker) domain.Movie {
		m, err := domain.NewMovie(id, title, frames, fps, now)
		if err != nil {
			panic(err) // constant input
		}
		if markers != nil {
			m.Settings.Markers = markers
		}
		return m
	}
	return []domain.Movie{
		mk("zebrafish-larva", "Zebrafish larva, free swimming", 240, 24, domain.Marker{ID: "m1", Label: "Head", X: 0.42, Y: 0.48}),
		mk("mouse-open-field", "Mouse, open-field trial", 600, 30),
		mk("fly-courtship", "Fruit fly courtship", 360, 60),
		mk(FailingMovieID, "Damaged footage (its trace fails)", 240, 24, domain.Marker{ID: "m1", Label: "Target", X: 0.6, Y: 0.4}),
	}
}

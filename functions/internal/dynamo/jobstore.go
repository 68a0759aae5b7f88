package dynamo

import (
	"context"
	"fmt"

	"github.com/movietrace/tracinglocks/domain"
)

// JobStore is the trace worker's view of the movies and frames tables: it
// implements the worker's ports (worker.Movies, worker.Frames) with domain
// values only. A refusal is the domain's (*domain.Error, rebuilt from the
// item DynamoDB evaluated); a transaction conflict wraps domain.ErrConflict.
type JobStore struct {
	movies *MovieStore
	frames *FrameStore
}

// NewJobStore returns the worker's store on the two tables.
func NewJobStore(movies *MovieStore, frames *FrameStore) *JobStore {
	return &JobStore{movies: movies, frames: frames}
}

// Commit applies cmd as one conditional UpdateItem (MovieStore.Commit).
func (s *JobStore) Commit(ctx context.Context, movieID string, cmd domain.Command) (domain.Movie, error) {
	m, err := s.movies.Commit(ctx, movieID, cmd)
	return m, asConflict(err)
}

// Keys returns the stored frame indexes at or after from (FrameStore.Keys).
func (s *JobStore) Keys(ctx context.Context, movieID string, from int) ([]int, error) {
	return s.frames.Keys(ctx, movieID, from)
}

// Page returns stored frames at or after from (FrameStore.Page).
func (s *JobStore) Page(ctx context.Context, movieID string, from, limit int) ([]domain.Frame, *int, error) {
	return s.frames.Page(ctx, movieID, from, limit)
}

// WriteFenced writes frames in one TransactWriteItems fenced on f
// (MovieStore.FenceCheck, FrameStore.WriteFenced). A failed fence is the
// domain's refusal.
func (s *JobStore) WriteFenced(ctx context.Context, movieID string, f domain.JobFence, puts []domain.Frame, deletes []int) error {
	check, err := s.movies.FenceCheck(movieID, f)
	if err != nil {
		return err
	}
	err = s.frames.WriteFenced(ctx, movieID, check, puts, deletes)
	if err == nil {
		return nil
	}
	if refusal := FenceRefusal(err, f); domain.ErrorCode(refusal) != "" {
		return refusal
	}
	return asConflict(err)
}

// asConflict wraps a transaction conflict with domain.ErrConflict.
func asConflict(err error) error {
	if err != nil && IsTransactionConflict(err) {
		return fmt.Errorf("%w: %w", domain.ErrConflict, err)
	}
	return err
}

// SweepStore is the sweeper's view of the movies table (sweeper.Movies):
// every well-formed movie, and conditional commits. A malformed row is
// left out of the listing (the API's listing logs it); the sweeper could
// not decide anything about it.
type SweepStore struct{ *MovieStore }

// List returns every well-formed movie.
func (s SweepStore) List(ctx context.Context) ([]domain.Movie, error) {
	movies, _, err := s.MovieStore.List(ctx)
	return movies, err
}

// Package sweeper finalises what nobody else will: a tracing lease that went
// stale and that no trace request took over stays "tracing" on the stored
// row until someone opens the movie. The sweeper lists the movies and, for
// each one a rule matches, commits the rule's command (one conditional write,
// refused if the row changed meanwhile). The stack runs it as a scheduled
// Lambda (functions/sweeper), the local stack as a goroutine.
package sweeper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/utils/clock"

	"github.com/movietrace/tracinglocks/domain"
)

// Movies is the sweeper's port on the movies table, in domain values.
type Movies interface {
	List(ctx context.Context) ([]domain.Movie, error)
	Commit(ctx context.Context, movieID string, cmd domain.Command) (domain.Movie, error)
}

// Rule returns the command that finalises m at now, or nil when m needs
// nothing.
type Rule func(m domain.Movie, now time.Time) domain.Command

// StaleTrace is the rule for a stale tracing lease (domain.TraceStale):
// FinalizeStaleTrace with the lease and progress as read
// (domain.StaleTraceAt; the command's precondition holds only if neither
// changed).
func StaleTrace(m domain.Movie, now time.Time) domain.Command {
	if f, ok := domain.StaleTraceAt(m, now); ok {
		return f
	}
	return nil
}

// Hook runs once per sweep on the sweep's listing, after the rules, for work
// a command alone cannot do (ingest.Handler.ExpireUploads also deletes a
// late file). It returns how many movies it finalised; an error is logged
// and left to the next sweep.
type Hook func(ctx context.Context, movies []domain.Movie, now time.Time) (int, error)

// Options configure a Sweeper. Movies is required.
type Options struct {
	Movies Movies
	// Rules run on every movie, in order; the first that returns a command
	// wins for that movie in this sweep (default: StaleTrace).
	Rules []Rule
	// Hooks run after the rules, in order, on the same listing.
	Hooks []Hook
	Log   *slog.Logger       // default: discard
	Clock clock.PassiveClock // default: the real clock
}

// Sweeper runs sweeps.
type Sweeper struct{ o Options }

// New returns a sweeper.
func New(o Options) (*Sweeper, error) {
	if o.Movies == nil {
		return nil, errors.New("sweeper: Movies is required")
	}
	if o.Rules == nil {
		o.Rules = []Rule{StaleTrace}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return &Sweeper{o: o}, nil
}

// Report counts what one sweep did.
type Report struct {
	Movies    int // rows read
	Finalized int // commands committed
	Skipped   int // commands refused: the row changed since it was read
	Failed    int // commands that failed otherwise (retried next sweep)
}

// Sweep reads every movie and commits the matching rules' commands. A
// refused command means someone else acted first; a failed one is logged
// and left to the next sweep. Only a failed listing is an error.
func (s *Sweeper) Sweep(ctx context.Context) (Report, error) {
	movies, err := s.o.Movies.List(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("sweep: %w", err)
	}
	rep := Report{Movies: len(movies)}
	for _, m := range movies {
		now := s.o.Clock.Now()
		for _, rule := range s.o.Rules {
			cmd := rule(m, now)
			if cmd == nil {
				continue
			}
			s.commit(ctx, m.ID, cmd, &rep)
			break
		}
	}
	for _, hook := range s.o.Hooks {
		n, err := hook(ctx, movies, s.o.Clock.Now())
		rep.Finalized += n
		if err != nil {
			rep.Failed++
			s.o.Log.WarnContext(ctx, "sweep hook failed; the next sweep retries", slog.String("error", err.Error()))
		}
	}
	return rep, nil
}

func (s *Sweeper) commit(ctx context.Context, movieID string, cmd domain.Command, rep *Report) {
	_, err := s.o.Movies.Commit(ctx, movieID, cmd)
	switch {
	case err == nil:
		rep.Finalized++
		s.o.Log.InfoContext(ctx, "swept", slog.String("movieId", movieID), slog.String("command", fmt.Sprintf("%T", cmd)))
	case domain.ErrorCode(err) != "":
		rep.Skipped++
	default:
		rep.Failed++
		s.o.Log.WarnContext(ctx, "sweep write failed; the next sweep retries", slog.String("movieId", movieID),
			slog.String("command", fmt.Sprintf("%T", cmd)), slog.String("error", err.Error()))
	}
}

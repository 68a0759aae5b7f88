package proof

import (
	"context"
	"errors"
	"strings"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
)

// Store is what the harness drives. The DynamoDB implementation is the
// system under test; the tests also drive a deliberately broken one to show
// that the checks catch a broken protocol.
type Store interface {
	Create(ctx context.Context, m domain.Movie) error
	Commit(ctx context.Context, movieID string, cmd domain.Command) (domain.Movie, error)
	// Delete removes the row under a guard (domain.PurgeMovie) and returns
	// the row it removed.
	Delete(ctx context.Context, movieID string, g domain.Guard) (domain.Movie, error)
	Get(ctx context.Context, movieID string) (domain.Movie, error)
	// WriteFrame stores one frame of a job, fenced on the job's claimed live
	// lease; a refusal is the domain's (CodeLeaseLost).
	WriteFrame(ctx context.Context, movieID string, f domain.JobFence, frame int, token string) error
	// Frames returns every stored frame of a movie.
	Frames(ctx context.Context, movieID string) ([]StoredFrame, error)
}

// StoredFrame is one item of the frames table as the harness writes it.
type StoredFrame struct {
	Frame int
	JobID string
	Token string
}

// DB is the part of the DynamoDB client the harness's store uses.
type DB interface {
	dynamo.MovieAPI
	dynamo.FrameAPI
}

// DynamoStore is the system under test: dynamo.MovieStore for the row, and
// dynamo.FrameStore's fenced writes for frames, exactly as the worker makes
// them (MovieStore.FenceCheck first, then the frame put, in one
// TransactWriteItems).
type DynamoStore struct {
	*dynamo.MovieStore
	frames *dynamo.FrameStore
}

// NewDynamoStore returns the store on the given tables.
func NewDynamoStore(db DB, t dynamo.Tables) *DynamoStore {
	return &DynamoStore{MovieStore: dynamo.NewMovieStore(db, t.Movies), frames: dynamo.NewFrameStore(db, t.Frames)}
}

// tokenMarker carries a write's token in the stored frame, as the ID of
// its one point, so that the checks can tell which write a stored frame
// came from.
const tokenMarker = "w"

// WriteFrame implements Store.
func (s *DynamoStore) WriteFrame(ctx context.Context, movieID string, f domain.JobFence, frame int, token string) error {
	check, err := s.FenceCheck(movieID, f)
	if err != nil {
		return err
	}
	put := domain.Frame{Index: frame, JobID: f.JobID, Points: []domain.Point{{MarkerID: tokenMarker + token, X: 0.5, Y: 0.5}}}
	if err := s.frames.WriteFenced(ctx, movieID, check, []domain.Frame{put}, nil); err != nil {
		return dynamo.FenceRefusal(err, f)
	}
	return nil
}

// Frames implements Store.
func (s *DynamoStore) Frames(ctx context.Context, movieID string) ([]StoredFrame, error) {
	var out []StoredFrame
	for from := 0; ; {
		page, next, err := s.frames.Page(ctx, movieID, from, dynamo.MaxFramePage)
		if err != nil {
			return nil, err
		}
		for _, f := range page {
			sf := StoredFrame{Frame: f.Index, JobID: f.JobID}
			if len(f.Points) == 1 {
				sf.Token = strings.TrimPrefix(f.Points[0].MarkerID, tokenMarker)
			}
			out = append(out, sf)
		}
		if next == nil {
			return out, nil
		}
		from = *next
	}
}

// classify turns a store result into an outcome. A refusal is an outcome;
// dynamo.ErrDisagreement and other non-transport errors are bugs (Err set,
// Unknown false); anything else failed in transport and is unknown.
func classify(m *domain.Movie, err error) Outcome {
	if err == nil {
		return Outcome{Movie: m}
	}
	if e, ok := domain.AsError(err); ok {
		return Outcome{Refusal: e}
	}
	if errors.Is(err, dynamo.ErrDisagreement) {
		return Outcome{Err: err.Error()}
	}
	// A transaction cancelled for a reason other than the fence (DynamoDB's
	// TransactionConflict) wrote nothing; unknown is the conservative reading.
	return Outcome{Unknown: true, Err: err.Error()}
}

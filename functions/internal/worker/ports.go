package worker

import (
	"context"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
)

// The worker's ports speak the domain: they take and return domain values,
// a refusal is a *domain.Error and a write that collided with a concurrent
// one (nothing written, retry) wraps domain.ErrConflict. No SDK type crosses
// them, so an in-memory store can stand in for DynamoDB in the worker's
// logic tests. The DynamoDB adapter is dynamo.JobStore, the SQS one
// queue.Jobs.

// Movies commits commands on movie rows.
type Movies interface {
	// Commit commits cmd on the movie as one conditional write and returns
	// the movie as written.
	Commit(ctx context.Context, movieID string, cmd domain.Command) (domain.Movie, error)
}

// Frames reads and writes a movie's frames.
type Frames interface {
	// Keys returns the indexes of the stored frames at or after from, in
	// order, read consistently.
	Keys(ctx context.Context, movieID string, from int) ([]int, error)
	// WriteFenced puts and deletes frames in one atomic write that holds
	// only while fence holds on the movie row: either every write lands or
	// none does. A refused fence is the domain's refusal (CodeLeaseLost).
	// At most Options.FrameBatch frames, none twice.
	WriteFenced(ctx context.Context, movieID string, fence domain.JobFence, puts []domain.Frame, deletes []int) error
	// Page returns up to limit stored frames at or after from, in frame
	// order, and the index to continue from (nil at the end), read
	// consistently: the completed job's quality is derived from them.
	Page(ctx context.Context, movieID string, from, limit int) ([]domain.Frame, *int, error)
}

// Queue is the trace-job queue.
type Queue interface {
	// Requeue makes a received message visible again after delay.
	Requeue(ctx context.Context, receiptHandle string, delay time.Duration) error
	// Continue enqueues the message of a job's next segment.
	Continue(ctx context.Context, job events.TraceJob) error
}

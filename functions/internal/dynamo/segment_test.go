package dynamo_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
)

// TestSegmentCommandsAgreeWithTheDomain walks one job through the segment
// commands (revival of a job that waited past its lease, hand-off, the
// continuation's claim, finalisation of a stale trace) on DynamoDB Local
// and on domain.Execute side by side: same verdicts, same rows (the absent
// lease.segment of a first segment included).
func TestSegmentCommandsAgreeWithTheDomain(t *testing.T) {
	s, _, _ := newStore(t)
	id := newID(t)[:12]
	model := createMovie(t, s, id)
	job := newID(t)
	const d = domain.DefaultLeaseDuration
	step := func(c domain.Command, want domain.Code) {
		t.Helper()
		next, merr := domain.Execute(&model, c)
		got, err := s.Commit(context.Background(), id, c)
		if domain.ErrorCode(merr) != want || domain.ErrorCode(err) != want {
			t.Fatalf("%T %+v: domain %v, DynamoDB %v, want %q", c, c, merr, err, want)
		}
		if want != "" {
			return
		}
		model = next
		if !reflect.DeepEqual(got, model) {
			t.Fatalf("%T: DynamoDB row\n%+v\ndomain row\n%+v", c, got, model)
		}
	}
	step(domain.StartTrace{JobID: job, User: domain.User{ID: "u", Name: "U"}, FromFrame: 0, Now: t0, Duration: d}, "")
	// It waited in the queue for two leases: revived, not lost.
	step(domain.ClaimSegment{JobID: job, Segment: 0, Now: t0.Add(2 * d), Duration: d}, "")
	step(domain.ClaimSegment{JobID: job, Segment: 0, Now: t0.Add(2 * d), Duration: d}, domain.CodeAlreadyClaimed)
	step(domain.BeginTrace{JobFence: domain.JobFence{JobID: job, Now: t0.Add(2 * d)}, Duration: d, TotalFrames: 300}, "")
	step(domain.HandOffJob{JobFence: domain.JobFence{JobID: job, Now: t0.Add(2 * d)}, Segment: 1, Duration: d, FramesWritten: 99}, domain.CodeLeaseLost)
	step(domain.HandOffJob{JobFence: domain.JobFence{JobID: job, Now: t0.Add(2 * d)}, Segment: 0, Duration: d, FramesWritten: 99}, "")
	step(domain.RenewJob{JobFence: domain.JobFence{JobID: job, Now: t0.Add(2 * d)}, Duration: d}, domain.CodeLeaseLost) // handed off: unclaimed
	step(domain.ClaimSegment{JobID: job, Segment: 0, Now: t0.Add(2 * d), Duration: d}, domain.CodeAlreadyClaimed)
	step(domain.ClaimSegment{JobID: job, Segment: 2, Now: t0.Add(2 * d), Duration: d}, domain.CodeAlreadyClaimed)
	step(domain.ClaimSegment{JobID: job, Segment: 1, Now: t0.Add(2 * d), Duration: d}, "")
	step(domain.RenewJob{JobFence: domain.JobFence{JobID: job, Now: t0.Add(2 * d)}, Duration: d, FramesWritten: 150}, "")
	lease, frames := *model.Lease, model.Progress.FramesWritten
	step(domain.FinalizeStaleTrace{Job: lease, FramesWritten: frames, Now: t0.Add(3 * d).Add(-time1ms)}, domain.CodeLeaseLost)
	step(domain.FinalizeStaleTrace{Job: lease, FramesWritten: frames - 1, Now: t0.Add(3 * d)}, domain.CodeLeaseLost)
	step(domain.FinalizeStaleTrace{Job: lease, FramesWritten: frames, Now: t0.Add(3 * d)}, "")
	if model.Status != domain.StatusFailed || model.LastJob.FailureSummary != domain.StalledSummary || model.LastJob.Frames != 150 {
		t.Fatalf("row %+v job %+v", model, model.LastJob)
	}
	step(domain.ClaimSegment{JobID: job, Segment: 2, Now: t0.Add(3 * d), Duration: d}, domain.CodeLeaseLost)
}

// conflictClient answers every UpdateItem with a transaction conflict.
type conflictClient struct{ dynamo.MovieAPI }

func (conflictClient) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return nil, &types.TransactionConflictException{Message: aws.String("conflict")}
}

// TestJobStoreMapsConflicts: the worker's adapter turns DynamoDB's
// transaction conflict into domain.ErrConflict, which the worker retries.
func TestJobStoreMapsConflicts(t *testing.T) {
	js := dynamo.NewJobStore(dynamo.NewMovieStore(conflictClient{}, "movies"), nil)
	_, err := js.Commit(context.Background(), "m1", domain.RenewJob{JobFence: domain.JobFence{JobID: newID(t), Now: t0}, Duration: domain.DefaultLeaseDuration})
	if !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("%v is not ErrConflict", err)
	}
}

const time1ms = time.Millisecond

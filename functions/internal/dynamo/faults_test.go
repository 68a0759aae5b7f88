package dynamo_test

import (
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"

	awsretry "github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/retry"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv/faults"
	"github.com/movietrace/tracinglocks/schema"
)

// Lost responses (issue 12 item 1). Every write kind goes through a
// transport that lets DynamoDB Local commit it and then loses the answer (a
// 500, or a connection reset), so the SDK retries a write that already took
// effect. The caller must get the answer it would have got, and the row must
// hold the command's effect exactly once.

// faulty is a store (and frame store) whose client goes through a fault
// transport, beside a clean store on the same tables to look at the rows.
type faulty struct {
	clean  *dynamo.MovieStore
	movies *dynamo.MovieStore
	frames *dynamo.FrameStore
	ft     *faults.Transport
	// client is the faulty client itself.
	client *dynamodb.Client
	// cleanFrames reads the frames table without faults.
	cleanFrames *dynamo.FrameStore
}

func newFaulty(t *testing.T, opts ...dynamo.Option) faulty {
	t.Helper()
	clean, client, tables := newStore(t)
	ft := faults.New(nil)
	fc := testenv.DynamoDB(t, func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: ft}
		// The SDK's own retries, with short pauses so the test is quick.
		o.Retryer = awsretry.NewStandard(func(so *awsretry.StandardOptions) {
			so.Backoff = awsretry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
		})
	})
	return faulty{clean: clean, movies: dynamo.NewMovieStore(fc, tables.Movies, opts...), frames: dynamo.NewFrameStore(fc, tables.Frames), ft: ft, client: fc,
		cleanFrames: dynamo.NewFrameStore(client, tables.Frames)}
}

// commitLosing commits cmd with its first answer lost as kind and requires
// the domain's answer and exactly one effect on the row.
func (f faulty) commitLosing(t *testing.T, id string, kind faults.Kind, cmd domain.Command) domain.Movie {
	t.Helper()
	ctx := context.Background()
	pre, err := f.clean.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want, err := domain.Execute(&pre, cmd)
	if err != nil {
		t.Fatalf("%T: the domain refuses it: %v", cmd, err)
	}
	before := f.ft.Requests("UpdateItem")
	f.ft.Inject(faults.Rule{Op: "UpdateItem", Kind: kind, Times: 1})
	got, err := f.movies.Commit(ctx, id, cmd)
	if err != nil {
		t.Fatalf("%T with its answer lost (%v): %v", cmd, kind, err)
	}
	if f.ft.Pending() != 0 || f.ft.Requests("UpdateItem")-before != 2 {
		t.Fatalf("%T: the fault was not injected and retried (%d requests)", cmd, f.ft.Requests("UpdateItem")-before)
	}
	stored, err := f.clean.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(schema.NewMovieItem(stored), schema.NewMovieItem(want)) {
		t.Fatalf("%T: stored\n %+v\nwant exactly one effect\n %+v", cmd, schema.NewMovieItem(stored), schema.NewMovieItem(want))
	}
	if !reflect.DeepEqual(schema.NewMovieItem(got), schema.NewMovieItem(want)) {
		t.Fatalf("%T: answered\n %+v\nwant\n %+v", cmd, schema.NewMovieItem(got), schema.NewMovieItem(want))
	}
	return got
}

func TestEveryWriteSurvivesALostResponse(t *testing.T) {
	for _, kind := range []faults.Kind{faults.Lose500, faults.Drop} {
		t.Run(kind.String(), func(t *testing.T) {
			f := newFaulty(t)
			ctx := context.Background()
			id := "lost-" + kind.String()
			createMovie(t, f.clean, id)
			a, job := newID(t), newID(t)
			at := func(s int) time.Time { return t0.Add(time.Duration(s)*time.Second + 500*time.Microsecond) }

			f.commitLosing(t, id, kind, domain.OpenAnalysis{LeaseID: a, User: alice, Now: at(0), Duration: lease})
			f.commitLosing(t, id, kind, domain.Heartbeat{LeaseID: a, Now: at(1), Duration: lease})
			f.commitLosing(t, id, kind, domain.EditMarkers{LeaseID: a, UserID: alice.ID, Now: at(2), Markers: []domain.Marker{{ID: "m2", Label: "b", X: 0.25, Y: 0.75}}})
			f.commitLosing(t, id, kind, domain.EditTrim{LeaseID: a, UserID: alice.ID, Now: at(2), Trim: domain.Trim{Start: 5, End: 200}})
			f.commitLosing(t, id, kind, domain.EditCaptureInterval{LeaseID: a, UserID: alice.ID, Now: at(2), Interval: 2})
			f.commitLosing(t, id, kind, domain.StartTrace{LeaseID: a, JobID: job, User: alice, FromFrame: 5, Now: at(3), Duration: lease})
			claimed := f.commitLosing(t, id, kind, domain.ClaimSegment{JobID: job, Token: newID(t), Now: at(4), Duration: lease})
			f.commitLosing(t, id, kind, domain.BeginTrace{JobFence: domain.JobFence{JobID: job, Now: at(4)}, Duration: lease, CleanBefore: 5, TotalFrames: 3})

			// A fenced frame write whose answer is lost: the SDK retries the
			// same transaction; the frames are stored once.
			fence := domain.JobFence{JobID: job, Now: at(5)}
			f.ft.Inject(faults.Rule{Op: "TransactWriteItems", Kind: kind, Times: 1})
			if err := f.frames.WriteFenced(ctx, id, fenceCheck(t, f.clean, id, fence), framesOf(job, 5, 7, 9), nil); err != nil {
				t.Fatalf("frame write with its answer lost: %v", err)
			}
			if f.ft.Pending() != 0 {
				t.Fatal("the frame write fault was not injected")
			}
			keys, err := f.cleanFrames.Keys(ctx, id, 0)
			if err != nil || !reflect.DeepEqual(keys, []int{5, 7, 9}) {
				t.Fatalf("frames %v (%v), want [5 7 9]", keys, err)
			}

			f.commitLosing(t, id, kind, domain.RenewJob{JobFence: fence, Duration: lease, FramesWritten: 3})
			// A segment handed off and claimed again, both answers lost.
			f.commitLosing(t, id, kind, domain.HandOffJob{JobFence: fence, Segment: 0, Duration: lease, FramesWritten: 3})
			claimed = f.commitLosing(t, id, kind, domain.ClaimSegment{JobID: job, Segment: 1, Token: newID(t), Now: at(5), Duration: lease})
			f.commitLosing(t, id, kind, domain.CompleteJob{Job: *claimed.Lease, Now: at(6), FramesWritten: 3})

			// A second trace that fails, a third whose worker dies and is
			// finalized, and a page that is released.
			job2, job3 := newID(t), newID(t)
			f.commitLosing(t, id, kind, domain.StartTrace{JobID: job2, User: bob, FromFrame: 5, Now: at(7), Duration: lease})
			c2 := f.commitLosing(t, id, kind, domain.ClaimSegment{JobID: job2, Token: newID(t), Now: at(7), Duration: lease})
			f.commitLosing(t, id, kind, domain.FailJob{Job: *c2.Lease, Now: at(8), FramesWritten: 0, Summary: "lost marker"})
			s3 := f.commitLosing(t, id, kind, domain.StartTrace{JobID: job3, User: bob, FromFrame: 5, Now: at(9), Duration: lease})
			f.commitLosing(t, id, kind, domain.FinalizeStaleTrace{Job: *s3.Lease, FramesWritten: 0, Now: s3.Lease.ExpiresAt})
			b := newID(t)
			f.commitLosing(t, id, kind, domain.OpenAnalysis{LeaseID: b, User: bob, Now: at(100), Duration: lease})
			// Release is idempotent by its refusal: the retry is not_held,
			// which Release reports as success.
			f.ft.Inject(faults.Rule{Op: "UpdateItem", Kind: kind, Times: 1})
			if _, err := f.movies.Release(ctx, id, domain.Release{LeaseID: b, Now: at(101)}); err != nil {
				t.Fatalf("release with its answer lost: %v", err)
			}
			if m, err := f.clean.Get(ctx, id); err != nil || m.Lease != nil {
				t.Fatalf("after the release: %v, lease %+v", err, m.Lease)
			}
		})
	}
}

// A redelivered message is a new claim attempt with a new token: it stays a
// no-op even though the first claim's answer was lost and retried.
func TestARedeliveredClaimStaysANoOp(t *testing.T) {
	f := newFaulty(t)
	id := "redelivered"
	createMovie(t, f.clean, id)
	job := newID(t)
	apply(t, f.clean, id, domain.StartTrace{JobID: job, User: alice, FromFrame: 0, Now: t0, Duration: lease})
	f.commitLosing(t, id, faults.Drop, domain.ClaimSegment{JobID: job, Token: newID(t), Now: t0, Duration: lease})
	refused(t, f.movies, id, domain.ClaimSegment{JobID: job, Token: newID(t), Now: t0, Duration: lease}, domain.CodeAlreadyClaimed)
}

// TransactionConflictException (issue 12 item 2): the write collided with a
// transaction and wrote nothing; the store retries it with backoff instead
// of failing (a 500 at the API). DynamoDB Local never throws it, so the
// transport answers it.
func TestTransactionConflictIsRetried(t *testing.T) {
	var pauses []time.Duration
	policy := retry.Policy{Attempts: 4, Delay: retry.Jittered, Sleep: func(_ context.Context, d time.Duration) error {
		pauses = append(pauses, d)
		return nil
	}}
	f := newFaulty(t, dynamo.WithConflictRetry(policy))
	id := "conflict"
	createMovie(t, f.clean, id)
	a := newID(t)

	f.ft.Inject(faults.Rule{Op: "UpdateItem", Kind: faults.Conflict, Times: 3})
	m, err := f.movies.Commit(context.Background(), id, domain.OpenAnalysis{LeaseID: a, User: alice, Now: t0, Duration: lease})
	if err != nil || m.Lease == nil || m.Lease.ID != a || m.Version != 2 {
		t.Fatalf("after 3 conflicts: %v, %+v", err, m.Lease)
	}
	if n := f.ft.Requests("UpdateItem"); n != 4 || len(pauses) != 3 {
		t.Fatalf("%d requests, %d pauses; want 4 and 3", n, len(pauses))
	}
	for i, p := range pauses {
		if p < time.Millisecond || p > retry.Cap+time.Millisecond {
			t.Fatalf("pause %d = %v", i, p)
		}
	}

	f.ft.Inject(faults.Rule{Op: "UpdateItem", Kind: faults.Conflict, Times: 4})
	_, err = f.movies.Commit(context.Background(), id, domain.Heartbeat{LeaseID: a, Now: t0.Add(time.Second), Duration: lease})
	if !dynamo.IsTransactionConflict(err) || domain.ErrorCode(err) != "" {
		t.Fatalf("4 conflicts with 4 attempts: %v, want the conflict (a 500, not a refusal)", err)
	}
	if n := f.ft.Requests("UpdateItem"); n != 8 {
		t.Fatalf("%d requests, want 8: the SDK must not retry it on its own, the store does", n)
	}
}

package dynamo_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv/faults"
	"github.com/movietrace/tracinglocks/schema"
)

// drainQuota spends the SDK's client-side retry quota of f's client (the
// standard retryer's default token bucket) with lost GetItem answers, until
// the SDK refuses a retry because the quota is exhausted.
func drainQuota(t *testing.T, f faulty, id string) {
	t.Helper()
	ctx := context.Background()
	key := map[string]types.AttributeValue{schema.AttrMovieID: &types.AttributeValueMemberS{Value: id}}
	in := &dynamodb.GetItemInput{TableName: aws.String(tableOf(t, f, id)), Key: key}
	for i := 0; ; i++ {
		if i > 200 {
			t.Fatal("the retry quota never ran out")
		}
		f.ft.Inject(faults.Rule{Op: "GetItem", Kind: faults.Lose500, Times: 3})
		_, err := f.client.GetItem(ctx, in)
		var quota ratelimit.QuotaExceededError
		if errors.As(err, &quota) {
			break
		}
		if err == nil {
			t.Fatal("a lost GetItem answer succeeded")
		}
	}
	// Spend the faults left over: with the quota gone, one attempt each.
	for f.ft.Pending() > 0 {
		if _, err := f.client.GetItem(ctx, in); err == nil {
			t.Fatal("an injected fault was not injected")
		}
	}
	// The SDK now gives up on a lost answer at once: what a write of the
	// store would have met before it retried by itself.
	f.ft.Inject(faults.Rule{Op: "GetItem", Kind: faults.Lose500, Times: 1})
	before := f.ft.Requests("GetItem")
	if _, err := f.client.GetItem(ctx, in); err == nil || f.ft.Requests("GetItem")-before != 1 {
		t.Fatalf("with the quota drained the SDK still retried: %v, %d requests", err, f.ft.Requests("GetItem")-before)
	}
}

// tableOf finds the movies table through the clean store's view of the row.
func tableOf(t *testing.T, f faulty, id string) string {
	t.Helper()
	out, err := f.client.ListTables(context.Background(), &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range out.TableNames {
		got, err := f.client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(name),
			Key: map[string]types.AttributeValue{schema.AttrMovieID: &types.AttributeValueMemberS{Value: id}}})
		if err == nil && len(got.Item) > 0 {
			return name
		}
	}
	t.Fatalf("no table holds movie %s", id)
	return ""
}

// Issue 20 item 1: replay detection does not depend on the SDK's retry
// quota. With the quota drained (the SDK retries nothing any more), a lost
// answer to OpenAnalysis, StartTrace and a segment claim is still answered
// as the success it was, each effect once: the store sends the write again
// itself and recognises its own effect (AlreadyApplied) on the refusal.
func TestLostAnswersAfterTheSDKQuotaIsDrained(t *testing.T) {
	for _, kind := range []faults.Kind{faults.Lose500, faults.Drop} {
		t.Run(kind.String(), func(t *testing.T) {
			f := newFaulty(t)
			id := "quota-" + kind.String()
			createMovie(t, f.clean, id)
			drainQuota(t, f, id)
			a, job := newID(t), newID(t)
			f.commitLosing(t, id, kind, domain.OpenAnalysis{LeaseID: a, User: alice, Now: t0, Duration: lease})
			f.commitLosing(t, id, kind, domain.StartTrace{LeaseID: a, JobID: job, User: alice, FromFrame: 0, Now: t0, Duration: lease})
			f.commitLosing(t, id, kind, domain.ClaimSegment{JobID: job, Segment: 0, Token: newID(t), Now: t0, Duration: lease})

			// A create whose answer is lost is the success it was; another
			// creation under the same ID stays a conflict.
			up := domain.CreateMovie{ID: "up-" + kind.String(), Title: "Upload", MaxBytes: 1 << 20, Now: t0,
				Upload: domain.Upload{FileName: "a.mp4", ContentType: "video/mp4", SizeBytes: 10, ExpiresAt: t0.Add(time.Hour)}}
			f.ft.Inject(faults.Rule{Op: "PutItem", Kind: kind, Times: 1})
			before := f.ft.Requests("PutItem")
			if err := f.movies.Create(context.Background(), up.Movie()); err != nil || f.ft.Requests("PutItem")-before != 2 {
				t.Fatalf("create with its answer lost: %v (%d requests)", err, f.ft.Requests("PutItem")-before)
			}
			if m, err := f.clean.Get(context.Background(), up.ID); err != nil || !up.Replays(m) || m.Version != 1 {
				t.Fatalf("stored %+v, %v", m, err)
			}
			other := up
			other.Upload.SizeBytes = 11
			if err := f.movies.Create(context.Background(), other.Movie()); domain.ErrorCode(err) != domain.CodeExists {
				t.Fatalf("another creation under the same ID: %v", err)
			}
		})
	}
}

package dynamo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/testenv"
	"github.com/movietrace/tracinglocks/schema"
)

// TestHistoryPagesNewestFirst writes 7 audit items of one movie (two at the
// same instant) and 2 of another to DynamoDB Local and pages the first
// movie's history 3 at a time: every item once, newest first, the other
// movie's never.
func TestHistoryPagesNewestFirst(t *testing.T) {
	client := testenv.DynamoDB(t)
	tables := testenv.NewTables(t, client)
	ctx := context.Background()
	put := func(movie string, i int, at time.Time, typ events.EventType) {
		item, err := schema.MarshalAuditItem(events.Event{Type: typ, MovieID: movie, JobID: fmt.Sprintf("%032x", i),
			UserID: "u", UserName: "Alice", At: at, Version: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &tables.Audit, Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 6 {
		put("movie-h", i, t0.Add(time.Duration(i)*time.Minute), events.TracingStarted)
	}
	put("movie-h", 6, t0.Add(5*time.Minute), events.TracingCompleted) // same instant as item 5
	put("movie-other", 7, t0.Add(time.Hour), events.TracingStarted)
	put("movie-other", 8, t0.Add(2*time.Hour), events.TracingStarted)

	r := dynamo.NewAuditReader(client, tables.Audit)
	var got []schema.AuditItem
	var after *events.HistoryPosition
	for page := 0; ; page++ {
		items, next, err := r.History(ctx, "movie-h", after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if page > 3 {
			t.Fatal("more pages than items")
		}
		got = append(got, items...)
		if next == nil {
			break
		}
		after = next
	}
	if len(got) != 7 {
		t.Fatalf("paged %d items, want 7", len(got))
	}
	seen := map[string]bool{}
	for i, it := range got {
		if it.MovieID != "movie-h" || seen[it.EventKey] {
			t.Fatalf("item %d: %+v (seen before: %v)", i, it, seen[it.EventKey])
		}
		seen[it.EventKey] = true
		if i > 0 && got[i-1].OccurredAt < it.OccurredAt {
			t.Fatalf("item %d at %s after item %d at %s: not newest first", i, it.OccurredAt, i-1, got[i-1].OccurredAt)
		}
	}
	if got[len(got)-1].Version != 0 {
		t.Fatalf("the oldest item comes last: %+v", got[len(got)-1])
	}
	if items, next, err := r.History(ctx, "no-such-movie", nil, 10); err != nil || len(items) != 0 || next != nil {
		t.Fatalf("unknown movie: %v %v %v", items, next, err)
	}
	if _, _, err := r.History(ctx, "bad id!", nil, 10); err == nil {
		t.Fatal("a malformed movie ID was queried")
	}
}

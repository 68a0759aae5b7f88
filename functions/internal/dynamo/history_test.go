package dynamo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
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

// queryRecorder records each Query's input and how many items it read.
type queryRecorder struct {
	dynamo.AuditAPI
	inputs  []*dynamodb.QueryInput
	scanned []int32
}

func (q *queryRecorder) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := q.AuditAPI.Query(ctx, in, opts...)
	q.inputs = append(q.inputs, in)
	if out != nil {
		q.scanned = append(q.scanned, out.ScannedCount)
	}
	return out, err
}

// TestHistoryPageIsOneBoundedQuery: with 230 audit items of one movie (more
// than any page, many at the same instant), every page is exactly one
// descending Query of the history index that reads at most limit+1 items,
// whatever the page; the pages together are every item once, newest first,
// and the last page is not followed by an empty one.
func TestHistoryPageIsOneBoundedQuery(t *testing.T) {
	client := testenv.DynamoDB(t)
	tables := testenv.NewTables(t, client)
	ctx := context.Background()
	const n = 230
	var reqs []types.TransactWriteItem
	flush := func() {
		if len(reqs) == 0 {
			return
		}
		if _, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: reqs}); err != nil {
			t.Fatal(err)
		}
		reqs = nil
	}
	for i := range n {
		// Three items a second: many share an instant with another.
		item, err := schema.MarshalAuditItem(events.Event{Type: events.TracingStarted, MovieID: "movie-b", JobID: fmt.Sprintf("%032x", i),
			UserID: "u", UserName: "Alice", At: t0.Add(time.Duration(i/3) * time.Second), Version: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, types.TransactWriteItem{Put: &types.Put{TableName: &tables.Audit, Item: item}})
		if len(reqs) == 100 {
			flush()
		}
	}
	flush()

	rec := &queryRecorder{AuditAPI: client}
	r := dynamo.NewAuditReader(rec, tables.Audit)
	const limit = 20
	var got []schema.AuditItem
	var after *events.HistoryPosition
	pages := 0
	for {
		before := len(rec.inputs)
		items, next, err := r.History(ctx, "movie-b", after, limit)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(rec.inputs)-before != 1 {
			t.Fatalf("page %d: %d Query requests, want 1", pages, len(rec.inputs)-before)
		}
		in := rec.inputs[len(rec.inputs)-1]
		if in.IndexName == nil || *in.IndexName != schema.HistoryIndex || in.ScanIndexForward == nil || *in.ScanIndexForward ||
			in.Limit == nil || *in.Limit != limit+1 {
			t.Fatalf("page %d: Query index %v forward %v limit %v, want the history index, descending, limit %d",
				pages, in.IndexName, in.ScanIndexForward, in.Limit, limit+1)
		}
		if s := rec.scanned[len(rec.scanned)-1]; s > limit+1 {
			t.Fatalf("page %d read %d items, want at most %d", pages, s, limit+1)
		}
		if len(items) == 0 {
			t.Fatalf("page %d is empty", pages)
		}
		got = append(got, items...)
		if next == nil {
			break
		}
		if pages > n/limit+1 {
			t.Fatal("more pages than items")
		}
		// The cursor the API hands out carries the position intact.
		p, err := events.ParseCursor(next.Cursor())
		if err != nil || p != *next {
			t.Fatalf("cursor round trip of %+v: %+v %v", *next, p, err)
		}
		after = &p
	}
	if want := (n + limit - 1) / limit; pages != want || len(got) != n {
		t.Fatalf("%d items in %d pages, want %d in %d", len(got), pages, n, want)
	}
	seen := map[string]bool{}
	for i, it := range got {
		if seen[it.EventKey] {
			t.Fatalf("item %d (%s) twice", i, it.EventKey)
		}
		seen[it.EventKey] = true
		if i > 0 && got[i-1].HistoryKey <= it.HistoryKey {
			t.Fatalf("item %d %s after %s: not newest first", i, it.HistoryKey, got[i-1].HistoryKey)
		}
	}
	if got[0].OccurredAt != events.FormatTime(t0.Add((n-1)/3*time.Second)) || got[n-1].OccurredAt != events.FormatTime(t0) {
		t.Fatalf("newest %s, oldest %s", got[0].OccurredAt, got[n-1].OccurredAt)
	}
	// A page after the oldest item is empty and last.
	last := got[n-1].Position()
	if items, next, err := r.History(ctx, "movie-b", &last, limit); err != nil || len(items) != 0 || next != nil {
		t.Fatalf("after the oldest: %v %v %v", items, next, err)
	}
	for _, bad := range []int{0, -1, dynamo.MaxHistoryPage + 1} {
		if _, _, err := r.History(ctx, "movie-b", nil, bad); err == nil {
			t.Errorf("limit %d accepted", bad)
		}
	}
}

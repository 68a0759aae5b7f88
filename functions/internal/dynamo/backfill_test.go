package dynamo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/schema"
)

// TestBackfillHistoryKeys: audit items written before the history index
// (no historyKey) are missing from the history until the backfill sets
// their key; a dry run only counts, and a second run changes nothing.
func TestBackfillHistoryKeys(t *testing.T) {
	client := testenv.DynamoDB(t)
	tables := testenv.NewTables(t, client)
	ctx := context.Background()
	for i := range 7 {
		item, err := schema.MarshalAuditItem(events.Event{Type: events.TracingStarted, MovieID: "movie-old", JobID: fmt.Sprintf("%032x", i),
			UserID: "u", UserName: "Alice", At: t0.Add(time.Duration(i) * time.Minute), Version: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			delete(item, schema.AttrHistoryKey) // written by the processor before the index
		}
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &tables.Audit, Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	r := dynamo.NewAuditReader(client, tables.Audit)
	count := func() []schema.AuditItem {
		t.Helper()
		items, next, err := r.History(ctx, "movie-old", nil, 100)
		if err != nil || next != nil {
			t.Fatal(next, err)
		}
		return items
	}
	if n := len(count()); n != 3 {
		t.Fatalf("before the backfill the history has %d items, want the 3 with a key", n)
	}
	if got, err := dynamo.BackfillHistoryKeys(ctx, client, tables.Audit, true); err != nil || got != (dynamo.Backfill{Missing: 4}) {
		t.Fatalf("dry run: %+v %v", got, err)
	}
	if n := len(count()); n != 3 {
		t.Fatalf("a dry run changed the history: %d items", n)
	}
	if got, err := dynamo.BackfillHistoryKeys(ctx, client, tables.Audit, false); err != nil || got != (dynamo.Backfill{Missing: 4, Updated: 4}) {
		t.Fatalf("backfill: %+v %v", got, err)
	}
	items := count()
	if len(items) != 7 {
		t.Fatalf("after the backfill the history has %d items, want 7", len(items))
	}
	for i, it := range items {
		if it.Version != int64(6-i) || it.HistoryKey != it.Position().IndexKey() {
			t.Fatalf("item %d: version %d key %q, want newest first with its derived key", i, it.Version, it.HistoryKey)
		}
	}
	if got, err := dynamo.BackfillHistoryKeys(ctx, client, tables.Audit, false); err != nil || got != (dynamo.Backfill{}) {
		t.Fatalf("second run: %+v %v", got, err)
	}
}

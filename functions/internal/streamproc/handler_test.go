package streamproc_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
	"github.com/movietrace/tracinglocks/schema"
)

// Unit tests of the batching rules, on fakes (no emulator).

// fakeQueue records requests; reply decides each entry's fate.
type fakeQueue struct {
	requests [][]sqstypes.SendMessageBatchRequestEntry
	reply    func(e sqstypes.SendMessageBatchRequestEntry) (ok bool, senderFault bool, omit bool)
	err      error
}

func (f *fakeQueue) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	f.requests = append(f.requests, in.Entries)
	if f.err != nil {
		return nil, f.err
	}
	ids := map[string]bool{}
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		if ids[*e.Id] {
			return nil, errors.New("BatchEntryIdsNotDistinct")
		}
		ids[*e.Id] = true
		ok, sender, omit := true, false, false
		if f.reply != nil {
			ok, sender, omit = f.reply(e)
		}
		switch {
		case omit:
		case ok:
			out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id, MessageId: aws.String("m-" + *e.Id)})
		default:
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String("X"), SenderFault: sender})
		}
	}
	return out, nil
}

// fakeAudit accepts every transaction, refusing keys it already holds the
// way DynamoDB does (attribute_not_exists).
type fakeAudit struct {
	requests int
	items    map[string]bool
}

func (f *fakeAudit) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	f.requests++
	if ctx.Err() != nil { // as the SDK does
		return nil, ctx.Err()
	}
	if f.items == nil {
		f.items = map[string]bool{}
	}
	if len(in.TransactItems) > streamproc.MaxAuditItemsPerTransaction {
		return nil, errors.New("ValidationException: too many items")
	}
	reasons := make([]types.CancellationReason, len(in.TransactItems))
	cancel := false
	seen := map[string]bool{}
	for i, it := range in.TransactItems {
		k := key(it.Put.Item)
		if seen[k] {
			return nil, errors.New("ValidationException: two actions on one item")
		}
		seen[k] = true
		reasons[i].Code = aws.String("None")
		if f.items[k] {
			reasons[i].Code = aws.String("ConditionalCheckFailed")
			cancel = true
		}
	}
	if cancel {
		return nil, &types.TransactionCanceledException{CancellationReasons: reasons}
	}
	for k := range seen {
		f.items[k] = true
	}
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

func key(item map[string]types.AttributeValue) string {
	return item["movieId"].(*types.AttributeValueMemberS).Value + " " + item["eventKey"].(*types.AttributeValueMemberS).Value
}

func fakeHandler(q streamproc.QueueAPI, a streamproc.AuditAPI) (*streamproc.Handler, *bytes.Buffer) {
	var logs bytes.Buffer
	h, err := streamproc.New(streamproc.Options{
		Queue: q, Audit: a, QueueURL: "https://queue.invalid/q", AuditTable: "audit", PoisonQueueURL: "https://queue.invalid/poison",
		Log: slog.New(slog.NewJSONHandler(&logs, nil)), Backoff: noBackoff,
	})
	if err != nil {
		panic(err)
	}
	return h, &logs
}

// manyStarts clones the lifecycle fixture's start record for n movies.
func manyStarts(t *testing.T, n int) []events.DynamoDBEventRecord {
	t.Helper()
	var start events.DynamoDBEventRecord
	for _, b := range loadFixtures(t) {
		if b.name == "lifecycle" {
			start = b.recs[4]
		}
	}
	var out []events.DynamoDBEventRecord
	for i := range n {
		r := start
		r.Change.SequenceNumber = fmt.Sprintf("%021d", i+1)
		r.Change.OldImage = withMovie(start.Change.OldImage, fmt.Sprintf("movie-%d", i))
		r.Change.NewImage = withMovie(start.Change.NewImage, fmt.Sprintf("movie-%d", i))
		lease := map[string]events.DynamoDBAttributeValue{}
		for k, v := range r.Change.NewImage[schema.AttrLease].Map() {
			lease[k] = v
		}
		lease["id"] = events.NewStringAttribute(fmt.Sprintf("%032x", i+1))
		r.Change.NewImage[schema.AttrLease] = events.NewMapAttribute(lease)
		out = append(out, r)
	}
	return out
}

func withMovie(img map[string]events.DynamoDBAttributeValue, id string) map[string]events.DynamoDBAttributeValue {
	out := map[string]events.DynamoDBAttributeValue{}
	for k, v := range img {
		out[k] = v
	}
	out[schema.AttrMovieID] = events.NewStringAttribute(id)
	return out
}

func run(t *testing.T, h *streamproc.Handler, recs []events.DynamoDBEventRecord) []string {
	t.Helper()
	resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range resp.BatchItemFailures {
		out = append(out, f.ItemIdentifier)
	}
	return out
}

func TestBatchingAcrossRecords(t *testing.T) {
	q, a := &fakeQueue{}, &fakeAudit{}
	h, _ := fakeHandler(q, a)
	recs := manyStarts(t, 125)
	if failed := run(t, h, recs); len(failed) != 0 {
		t.Fatalf("failed %v", failed)
	}
	if len(q.requests) != 13 || len(q.requests[0]) != 10 || len(q.requests[12]) != 5 {
		t.Errorf("SendMessageBatch requests: %d", len(q.requests))
	}
	if a.requests != 2 || len(a.items) != 125 {
		t.Errorf("%d TransactWriteItems for %d items, want 2 for 125", a.requests, len(a.items))
	}
	// Replaying: every item is present; one request per 100 finds that out.
	a.requests = 0
	if failed := run(t, h, recs); len(failed) != 0 || a.requests != 2 {
		t.Errorf("replay: failed %v after %d requests", failed, a.requests)
	}
	// Half new, half present: the new ones are retried alone.
	a.requests = 0
	more := manyStarts(t, 150)[100:]
	if failed := run(t, h, more); len(failed) != 0 || a.requests != 2 || len(a.items) != 150 {
		t.Errorf("mixed: failed %v, %d requests, %d items", failed, a.requests, len(a.items))
	}
}

func TestDuplicateRecordsInOneBatch(t *testing.T) {
	q, a := &fakeQueue{}, &fakeAudit{}
	h, _ := fakeHandler(q, a)
	recs := manyStarts(t, 3)
	recs = append(recs, recs...) // a replay file concatenated twice
	if failed := run(t, h, recs); len(failed) != 0 {
		t.Fatalf("failed %v", failed)
	}
	if len(q.requests) != 1 || len(q.requests[0]) != 3 || a.requests != 1 || len(a.items) != 3 {
		t.Errorf("requests %v, audit %d/%d", q.requests, a.requests, len(a.items))
	}
}

func TestSQSEntryFailures(t *testing.T) {
	recs := manyStarts(t, 25)
	job := func(i int) string { return fmt.Sprintf("%032x", i+1) }

	// A sender fault is not retried; the record is reported, and no later
	// batch is sent.
	q := &fakeQueue{reply: func(e sqstypes.SendMessageBatchRequestEntry) (bool, bool, bool) {
		return *e.Id != job(13), true, false
	}}
	a := &fakeAudit{}
	h, logs := fakeHandler(q, a)
	if failed := run(t, h, recs); len(failed) != 1 || failed[0] != recs[13].Change.SequenceNumber {
		t.Fatalf("failed %v", failed)
	}
	if len(q.requests) != 2 {
		t.Errorf("%d requests: a sender fault was retried or the third batch sent", len(q.requests))
	}
	if len(a.items) != 13 {
		t.Errorf("audit wrote %d items, want the 13 before the failed record", len(a.items))
	}
	if !bytes.Contains(logs.Bytes(), []byte(job(13))) {
		t.Error("the failed entry's job ID is not in the logs")
	}

	// An entry missing from the response counts as failed and is retried.
	omitted := 0
	q = &fakeQueue{reply: func(e sqstypes.SendMessageBatchRequestEntry) (bool, bool, bool) {
		if *e.Id == job(4) && omitted < 2 {
			omitted++
			return false, false, true
		}
		return true, false, false
	}}
	h, _ = fakeHandler(q, &fakeAudit{})
	if failed := run(t, h, recs); len(failed) != 0 {
		t.Fatalf("failed %v", failed)
	}
	if len(q.requests) != 5 || len(q.requests[1]) != 1 || len(q.requests[2]) != 1 {
		t.Errorf("%d requests, want 3 for the first ten (the omitted entry retried alone twice) and 2 more", len(q.requests))
	}

	// The whole request failing (after the SDK's own retries) fails the
	// batch's first record with a message.
	q = &fakeQueue{err: errors.New("network down")}
	h, _ = fakeHandler(q, &fakeAudit{})
	if failed := run(t, h, recs); len(failed) != 1 || failed[0] != recs[0].Change.SequenceNumber {
		t.Fatalf("failed %v", failed)
	}
	if len(q.requests) != streamproc.DefaultMaxAttempts {
		t.Errorf("%d attempts", len(q.requests))
	}
}

func TestEmptyAndUnreportable(t *testing.T) {
	h, _ := fakeHandler(&fakeQueue{}, &fakeAudit{})
	resp, err := h.Handle(context.Background(), events.DynamoDBEvent{})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("empty batch: %+v %v", resp, err)
	}
	// A failing record without a sequence number cannot be reported: the
	// whole batch is failed instead.
	// (A poison record is set aside, not failed; a job that cannot be sent
	// fails its record.)
	recs := manyStarts(t, 1)
	recs[0].Change.SequenceNumber = ""
	down, _ := fakeHandler(&fakeQueue{err: errors.New("ServiceUnavailable")}, &fakeAudit{})
	if _, err := down.Handle(context.Background(), events.DynamoDBEvent{Records: recs}); err == nil {
		t.Fatal("no error for an unreportable failure")
	}
	// A cancelled context fails the first record with work.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q := &fakeQueue{err: context.Canceled}
	h, _ = fakeHandler(q, &fakeAudit{})
	recs = manyStarts(t, 3)
	resp, err = h.Handle(ctx, events.DynamoDBEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != recs[0].Change.SequenceNumber {
		t.Fatalf("cancelled: %+v %v", resp, err)
	}
	if len(q.requests) != 1 {
		t.Errorf("%d requests after cancellation", len(q.requests))
	}
}

// slowQueue takes longer than the invocation has.
type slowQueue struct{ fakeQueue }

func (s *slowQueue) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, o ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	if len(s.requests) > 0 {
		<-ctx.Done()
		s.requests = append(s.requests, in.Entries)
		return nil, ctx.Err()
	}
	return s.fakeQueue.SendMessageBatch(ctx, in, o...)
}

// TestDeadlineLeavesTimeToReport: a batch that cannot finish before the
// invocation's deadline reports the first unfinished record in time.
func TestDeadlineLeavesTimeToReport(t *testing.T) {
	q, a := &slowQueue{}, &fakeAudit{}
	h, _ := fakeHandler(q, a)
	recs := manyStarts(t, 25)
	ctx, cancel := context.WithTimeout(context.Background(), 3500*time.Millisecond)
	defer cancel()
	resp, err := h.Handle(ctx, events.DynamoDBEvent{Records: recs})
	if err != nil || ctx.Err() != nil {
		t.Fatalf("err %v, ctx %v: the handler ran into the deadline", err, ctx.Err())
	}
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != recs[10].Change.SequenceNumber {
		t.Fatalf("reported %+v, want record 10 (the first of the unsent second batch)", resp.BatchItemFailures)
	}
	if len(a.items) != 10 {
		t.Errorf("audit has %d items, want the first 10", len(a.items))
	}
}

package streamproc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// failureMessage is the body Lambda's event source mapping sends to the
// on-failure destination for a batch of recs (the shape AWS documents for
// DynamoDB stream sources).
func failureMessage(recs []events.DynamoDBEventRecord, shard string) string {
	first, last := recs[0], recs[len(recs)-1]
	b, _ := json.Marshal(map[string]any{
		"requestContext": map[string]any{
			"requestId": "316aa6d0-8154-xmpl-9af7-85d5f4a6bc81", "functionArn": "arn:aws:lambda:us-east-1:123456789012:function:streamprocessor",
			"condition": "RetryAttemptsExhausted", "approximateInvokeCount": 11,
		},
		"responseContext": map[string]any{"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
		"version":         "1.0",
		"timestamp":       "2026-12-02T18:00:00.000Z",
		"DDBStreamBatchInfo": map[string]any{
			"shardId": shard, "startSequenceNumber": first.Change.SequenceNumber, "endSequenceNumber": last.Change.SequenceNumber,
			"approximateArrivalOfFirstRecord": "2026-12-02T17:59:00Z", "approximateArrivalOfLastRecord": "2026-12-02T17:59:01Z",
			"batchSize": len(recs), "streamArn": first.EventSourceArn,
		},
	})
	return string(b)
}

// TestReadRangeReadsTheFailedBatchBack: a failure message for records 2-4 of
// five movie writes reads exactly those three back from DynamoDB Local's
// stream, and handling them re-drives their effects.
func TestReadRangeReadsTheFailedBatchBack(t *testing.T) {
	e := newEnv(t)
	now := time.Now()
	for i := range 5 {
		e.createMovie(fmt.Sprintf("redrive-%d", i), now)
	}
	all := e.read()
	if len(all) < 5 {
		t.Fatalf("%d stream records, want at least 5", len(all))
	}
	shard := shardOf(t, e, all[1].Change.SequenceNumber)
	batch := all[1:4]
	msg := failureMessage(batch, shard)

	for _, body := range []string{msg, `{"Messages":[{"MessageId":"m1","ReceiptHandle":"r","Body":` + quote(msg) + `}]}`} {
		f, err := streamproc.DecodeFailure([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		got, err := streamproc.ReadRange(context.Background(), testenv.Streams(t), f)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(batch) {
			t.Fatalf("read %d records, want %d", len(got), len(batch))
		}
		for i := range got {
			if got[i].Change.SequenceNumber != batch[i].Change.SequenceNumber || got[i].EventName != batch[i].EventName ||
				got[i].Change.Keys["movieId"].String() != batch[i].Change.Keys["movieId"].String() {
				t.Errorf("record %d: %s %s %v, want %s %s %v", i, got[i].Change.SequenceNumber, got[i].EventName, got[i].Change.Keys,
					batch[i].Change.SequenceNumber, batch[i].EventName, batch[i].Change.Keys)
			}
		}
		e.mustHandle(got) // the re-drive itself: what the replay command does with them
	}
}

// shardOf finds the shard holding a sequence number (DynamoDB Local's
// shard IDs are its own; the test asks the stream, as an operator's
// failure message names it).
func shardOf(t *testing.T, e *env, seq string) string {
	t.Helper()
	ctx := context.Background()
	arn, err := streamproc.StreamARN(ctx, e.ddb, e.tables.Movies)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range shardIDs(t, arn) {
		f := streamproc.FailureRecord{BatchInfo: streamproc.BatchInfo{ShardID: id, StreamArn: arn, StartSequenceNumber: seq, EndSequenceNumber: seq}}
		if recs, err := streamproc.ReadRange(ctx, testenv.Streams(t), f); err == nil && len(recs) == 1 {
			return id
		}
	}
	t.Fatalf("no shard holds %s", seq)
	return ""
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestReadRangeRefusesABatchNoLongerInTheStream(t *testing.T) {
	e := newEnv(t)
	e.createMovie("gone", time.Now())
	all := e.read()
	arn := all[0].EventSourceArn
	f := streamproc.FailureRecord{BatchInfo: streamproc.BatchInfo{ShardID: "shardId-00000000000000000000-deadbeef", StreamArn: arn,
		StartSequenceNumber: "1", EndSequenceNumber: "2"}}
	if _, err := streamproc.ReadRange(context.Background(), testenv.Streams(t), f); err == nil {
		t.Fatal("a shard that does not exist was read")
	}
}

func TestDecodeFailureRefusesGarbage(t *testing.T) {
	for name, body := range map[string]string{
		"empty":            ``,
		"not JSON":         `{{{`,
		"no batch info":    `{"requestContext":{}}`,
		"no shard":         `{"DDBStreamBatchInfo":{"streamArn":"arn:x","startSequenceNumber":"1","endSequenceNumber":"2"}}`,
		"letters in seq":   `{"DDBStreamBatchInfo":{"shardId":"s","streamArn":"arn:x","startSequenceNumber":"1a","endSequenceNumber":"2"}}`,
		"end before start": `{"DDBStreamBatchInfo":{"shardId":"s","streamArn":"arn:x","startSequenceNumber":"20","endSequenceNumber":"3"}}`,
		"huge seq":         `{"DDBStreamBatchInfo":{"shardId":"s","streamArn":"arn:x","startSequenceNumber":"` + strings.Repeat("9", 100) + `","endSequenceNumber":"` + strings.Repeat("9", 100) + `"}}`,
		"empty messages":   `{"Messages":[]}`,
		"body not JSON":    `{"Messages":[{"Body":"nope"}]}`,
	} {
		if _, err := streamproc.DecodeFailure([]byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Sequence numbers compare as numbers, not strings.
	ok := `{"DDBStreamBatchInfo":{"shardId":"s","streamArn":"arn:x","startSequenceNumber":"9","endSequenceNumber":"10"}}`
	if _, err := streamproc.DecodeFailure([]byte(ok)); err != nil {
		t.Errorf("9..10: %v", err)
	}
}

func FuzzDecodeFailure(f *testing.F) {
	f.Add([]byte(`{"DDBStreamBatchInfo":{"shardId":"s","streamArn":"arn:x","startSequenceNumber":"1","endSequenceNumber":"2"}}`))
	f.Add([]byte(`{"Messages":[{"Body":"{}"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := streamproc.DecodeFailure(b)
		if err == nil && (rec.BatchInfo.ShardID == "" || rec.BatchInfo.StreamArn == "" || rec.BatchInfo.StartSequenceNumber == "") {
			t.Fatalf("accepted an incomplete record %+v from %q", rec, b)
		}
	})
}

func shardIDs(t *testing.T, arn string) []string {
	t.Helper()
	out, err := describeStream(testenv.Streams(t), arn)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func describeStream(c interface {
	DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
}, arn string) ([]string, error) {
	out, err := c.DescribeStream(context.Background(), &dynamodbstreams.DescribeStreamInput{StreamArn: &arn})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, s := range out.StreamDescription.Shards {
		ids = append(ids, *s.ShardId)
	}
	return ids, nil
}

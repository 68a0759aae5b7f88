package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/schema"
)

// streamEnv is a fresh movies table on DynamoDB Local and a poller on its
// stream whose handler is whatever the test says.
type streamEnv struct {
	t      *testing.T
	store  *dynamo.MovieStore
	poller *StreamPoller
	calls  [][]string // movie IDs of each invocation
	answer func(call int, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error)
}

func newStreamEnv(t *testing.T, maxRetries int) *streamEnv {
	t.Helper()
	ctx := t.Context()
	db := testenv.DynamoDB(t)
	tables := testenv.NewTables(t, db)
	arn, err := streamproc.StreamARN(ctx, db, tables.Movies)
	if err != nil {
		t.Fatal(err)
	}
	e := &streamEnv{t: t, store: dynamo.NewMovieStore(db, tables.Movies)}
	e.poller = &StreamPoller{
		Client: testenv.Streams(t), StreamARN: arn, MaxRetries: maxRetries, BatchSize: 100,
		Log: slog.New(slog.DiscardHandler),
		Handle: func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			var ids []string
			for _, r := range ev.Records {
				c, err := schema.DecodeRecord(r)
				if err != nil {
					return events.DynamoDBEventResponse{}, err
				}
				ids = append(ids, c.New.ID)
			}
			e.calls = append(e.calls, ids)
			return e.answer(len(e.calls), ev)
		},
	}
	return e
}

func (e *streamEnv) create(ids ...string) {
	e.t.Helper()
	for _, id := range ids {
		m, err := domain.NewMovie(id, "Movie "+id, 100, 25, time.Now())
		if err != nil {
			e.t.Fatal(err)
		}
		if err := e.store.Create(e.t.Context(), m); err != nil {
			e.t.Fatal(err)
		}
	}
}

// drain polls until the poller has been idle (caught up, no retry pending)
// for a while.
func (e *streamEnv) drain() {
	e.t.Helper()
	e.poller.Discover = time.Millisecond
	deadline := time.Now().Add(20 * time.Second)
	idleSince := time.Now()
	for time.Since(idleSince) < 600*time.Millisecond {
		if time.Now().After(deadline) {
			e.t.Fatalf("stream poller never caught up; calls so far %v", e.calls)
		}
		busy, err := e.poller.Poll(e.t.Context(), e.t.Context())
		if err != nil {
			e.t.Fatal(err)
		}
		if busy {
			idleSince = time.Now()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func seqOf(ev events.DynamoDBEvent, i int) string { return ev.Records[i].Change.SequenceNumber }

func ok() (events.DynamoDBEventResponse, error) {
	return events.DynamoDBEventResponse{}, nil
}

func wantCalls(t *testing.T, got [][]string, want ...[]string) {
	t.Helper()
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("invocations %v, want %v", got, want)
	}
}

func TestStreamPollerRetriesFromTheLowestReportedFailure(t *testing.T) {
	e := newStreamEnv(t, 3)
	e.create("a", "b", "c", "d", "e")
	e.answer = func(call int, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		if call == 1 { // d and c failed: the lowest is c
			return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{
				{ItemIdentifier: seqOf(ev, 3)}, {ItemIdentifier: seqOf(ev, 2)},
			}}, nil
		}
		return ok()
	}
	e.drain()
	wantCalls(t, e.calls, []string{"a", "b", "c", "d", "e"}, []string{"c", "d", "e"})

	// Later records come in a new batch, after the checkpoint.
	e.create("f")
	e.drain()
	wantCalls(t, e.calls[2:], []string{"f"})
}

func TestStreamPollerRetriesTheWholeBatchOnAFunctionError(t *testing.T) {
	e := newStreamEnv(t, 3)
	e.create("a", "b")
	e.answer = func(call int, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		switch call {
		case 1:
			return events.DynamoDBEventResponse{}, errors.New("boom")
		case 2:
			panic("crash") // a crashed invocation is a function error too
		case 3: // an identifier that is not in the batch fails it all, as in Lambda
			return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: "nope"}}}, nil
		}
		return ok()
	}
	e.drain()
	wantCalls(t, e.calls, []string{"a", "b"}, []string{"a", "b"}, []string{"a", "b"}, []string{"a", "b"})
}

func TestStreamPollerDiscardsABatchAfterMaxRetries(t *testing.T) {
	e := newStreamEnv(t, 2)
	e.create("a", "b", "c")
	e.answer = func(call int, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		for i, r := range ev.Records {
			if c, _ := schema.DecodeRecord(r); c.New.ID == "b" {
				return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: seqOf(ev, i)}}}, nil
			}
		}
		return ok()
	}
	e.drain()
	// First try, then two retries from b; then b and c are discarded (as an
	// on-failure destination would receive them) and the shard moves on.
	wantCalls(t, e.calls, []string{"a", "b", "c"}, []string{"b", "c"}, []string{"b", "c"})
	if e.poller.discarded != 2 {
		t.Fatalf("discarded %d records, want 2", e.poller.discarded)
	}
	e.create("d")
	e.drain()
	wantCalls(t, e.calls[3:], []string{"d"})
}

func TestStreamPollerBatchSize(t *testing.T) {
	e := newStreamEnv(t, 3)
	e.poller.BatchSize = 2
	e.create("a", "b", "c", "d", "e")
	e.answer = func(int, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) { return ok() }
	e.drain()
	wantCalls(t, e.calls, []string{"a", "b"}, []string{"c", "d"}, []string{"e"})
}

// convertForTest is a minimal converter; the stack uses the worker's.
func convertForTest(m sqstypes.Message, arn, region string) events.SQSMessage {
	return events.SQSMessage{
		MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
		Attributes: m.Attributes, EventSource: "aws:sqs", EventSourceARN: arn, AWSRegion: region,
	}
}

func TestQueuePollerDeletesOnlyWhatSucceeded(t *testing.T) {
	ctx := t.Context()
	client := testenv.SQS(t)
	url, arn, err := createQueue(ctx, client, testenv.UniqueName(t, "q"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("job-" + strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string // body#receiveCount of every delivery
	p := &QueuePoller{
		Client: client, QueueURL: url, QueueARN: arn, Region: Region, Convert: convertForTest, BatchSize: 10,
		Wait: time.Second, Log: slog.New(slog.DiscardHandler),
		Handle: func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			var resp events.SQSEventResponse
			var fnErr error
			for _, m := range ev.Records {
				n := m.Attributes["ApproximateReceiveCount"]
				if m.EventSourceARN != arn || n == "" {
					return resp, fmt.Errorf("record without its source or system attributes: %+v", m)
				}
				got = append(got, m.Body+"#"+n)
				switch {
				case m.Body == "job-1" && n == "1": // reported failed: comes back
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				case m.Body == "job-1" && n == "2": // a function error: nothing of the batch is deleted
					fnErr = errors.New("boom")
				}
			}
			return resp, fnErr
		},
	}
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(got, "job-1#3") {
		if time.Now().After(deadline) {
			t.Fatalf("deliveries so far %v", got)
		}
		if err := p.Poll(ctx, ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Everything has succeeded once: nothing may come back.
	time.Sleep(1200 * time.Millisecond)
	for range 2 {
		if err := p.Poll(ctx, ctx); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(got)
	want := []string{"job-0#1", "job-1#1", "job-1#2", "job-1#3", "job-2#1"}
	if !slices.Equal(got, want) {
		t.Fatalf("deliveries %v, want %v: job-0 and job-2 deleted after their first, job-1 back after its reported failure and after the function error", got, want)
	}
}

// TestQueuePollerHandsOneJobPerInvocation (issue 12, item 3): by default
// the local poller invokes the worker with one message at a time, as the
// stack's event source mapping does, so a job never waits inside an
// invocation behind another one while its lease runs out.
func TestQueuePollerHandsOneJobPerInvocation(t *testing.T) {
	ctx := t.Context()
	client := testenv.SQS(t)
	url, arn, err := createQueue(ctx, client, testenv.UniqueName(t, "q"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("job-" + strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var sizes []int
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &QueuePoller{
		Client: client, QueueURL: url, QueueARN: arn, Region: Region, Convert: convertForTest,
		Wait: time.Second, Log: slog.New(slog.DiscardHandler),
		Handle: func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			mu.Lock()
			sizes = append(sizes, len(ev.Records))
			mu.Unlock()
			return events.SQSEventResponse{}, nil
		},
	}
	done := make(chan struct{})
	go func() { defer close(done); p.Run(stop, ctx) }()
	count := func() (n int) {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range sizes {
			n += s
		}
		return n
	}
	for deadline := time.Now().Add(30 * time.Second); count() < 4; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("handled %d of 4 messages", count())
		}
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	for _, s := range sizes {
		if s != 1 {
			t.Fatalf("invocation sizes %v, want one message each", sizes)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// TestReplayFailureMessage: a trace start whose stream batch failed is
// re-driven from the failure queue's message: the command reads the batch
// back from DynamoDB Local's stream and the trace job reaches the queue.
func TestReplayFailureMessage(t *testing.T) {
	ddb, sq := testenv.DynamoDB(t), testenv.SQS(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tables := testenv.NewTables(t, ddb)
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(testenv.UniqueName(t, "jobs"))})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	env := map[string]string{
		envvar.AuditTable: tables.Audit, envvar.TraceQueueURL: *q.QueueUrl,
		envvar.DynamoDBEndpoint: os.Getenv(envvar.DynamoDBEndpoint), envvar.SQSEndpoint: os.Getenv(envvar.SQSEndpoint),
	}
	getenv := func(k string) string { return env[k] }

	// A movie that starts tracing: the change the failed batch held.
	store := dynamo.NewMovieStore(ddb, tables.Movies)
	now := time.Now()
	m, err := domain.NewMovie("failed-batch", "Failed batch", 120, 24, now)
	if err != nil {
		t.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "m1", Label: "x", X: 0.5, Y: 0.5}}
	if err := store.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	startTrace(t, ctx, store, m.ID, now)

	arn, err := streamproc.StreamARN(ctx, ddb, tables.Movies)
	if err != nil {
		t.Fatal(err)
	}
	streams := testenv.Streams(t)
	recs, err := streamproc.NewStreamReader(streams, arn).Read(ctx)
	if err != nil || len(recs) < 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	desc, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &arn})
	if err != nil || len(desc.StreamDescription.Shards) == 0 {
		t.Fatalf("describe stream: %v", err)
	}
	body, _ := json.Marshal(map[string]any{
		"requestContext": map[string]any{"condition": "RetryAttemptsExhausted"},
		"DDBStreamBatchInfo": map[string]any{
			"shardId": *desc.StreamDescription.Shards[len(desc.StreamDescription.Shards)-1].ShardId, "streamArn": arn,
			"startSequenceNumber": recs[0].Change.SequenceNumber, "endSequenceNumber": recs[len(recs)-1].Change.SequenceNumber,
			"batchSize": len(recs),
		},
	})
	msgFile := filepath.Join(t.TempDir(), "message.json")
	if err := os.WriteFile(msgFile, body, 0o600); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	if code := run(ctx, []string{"-failure", msgFile}, getenv, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("replay -failure exited %d: %s", code, errOut.String())
	}
	got, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || !strings.Contains(*got.Messages[0].Body, m.ID) {
		t.Fatalf("after the re-drive the queue holds %d messages, want the movie's one trace job", len(got.Messages))
	}

	// Usage: exactly one of -file and -failure; a garbage message fails.
	if code := run(ctx, []string{"-failure", msgFile, "-file", msgFile}, getenv, strings.NewReader(""), &out, &errOut); code != 2 {
		t.Errorf("both flags: exit %d, want 2", code)
	}
	if code := run(ctx, []string{"-failure", "-"}, getenv, strings.NewReader("{garbage"), &out, &errOut); code != 1 {
		t.Errorf("garbage message: exit %d, want 1", code)
	}
}

func startTrace(t *testing.T, ctx context.Context, store *dynamo.MovieStore, id string, now time.Time) {
	t.Helper()
	if _, err := store.Commit(ctx, id, domain.StartTrace{
		JobID: token.New(), User: domain.User{ID: "u-alice", Name: "Alice"}, Now: now, Duration: domain.DefaultLeaseDuration,
	}); err != nil {
		t.Fatal(err)
	}
}

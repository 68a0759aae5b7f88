package main

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/internal/wiring"
	"github.com/movietrace/tracinglocks/functions/testkit/awscount"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// TestWorkerOperationsAreListed runs the worker as the Lambda wires it
// (wiring.Tracer and wiring.Worker on clients from the same configuration,
// the synthetic tracer) with a request counter on its AWS clients, against
// the emulators: one job traced to its end, one whose invocation ends
// (a 6 s deadline, a 2 s stop margin, 300 frames at 20 ms) so that it
// hands off to a continuation, and one left for redelivery (less time than
// the start reserve). testdata/aws-operations.txt must list exactly the
// operations sent (infra/stack's TestFunctionOperationsAreGranted checks
// them against the worker role's grants).
func TestWorkerOperationsAreListed(t *testing.T) {
	ddb, sq := testenv.DynamoDB(t), testenv.SQS(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	tables := testenv.NewTables(t, ddb)
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(testenv.UniqueName(t, "jobs"))})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	vars := map[string]string{
		envvar.MoviesTable: tables.Movies, envvar.FramesTable: tables.Frames, envvar.TraceQueueURL: *q.QueueUrl,
		envvar.DynamoDBEndpoint: os.Getenv(envvar.DynamoDBEndpoint), envvar.SQSEndpoint: os.Getenv(envvar.SQSEndpoint),
		envvar.Tracer: "synthetic", envvar.TracerFrameDelay: "20ms",
		envvar.WorkerStopMargin: "2s", envvar.WorkerStartReserve: "3s",
	}
	getenv := func(k string) string { return vars[k] }
	cfg, err := config.FromEnv(getenv, envvar.MoviesTable, envvar.FramesTable, envvar.TraceQueueURL)
	if err != nil {
		t.Fatal(err)
	}
	counter := &awscount.Counter{}
	clients, err := awsclients.New(ctx, cfg, func(c *aws.Config) { c.APIOptions = append(c.APIOptions, counter.APIOption) })
	if err != nil {
		t.Fatal(err)
	}
	tr, err := wiring.Tracer(cfg, clients, getenv)
	if err != nil {
		t.Fatal(err)
	}
	w, err := wiring.Worker(cfg, clients, tr, slog.New(slog.DiscardHandler), getenv)
	if err != nil {
		t.Fatal(err)
	}

	store := dynamo.NewMovieStore(ddb, tables.Movies)
	start := func(id string, frames int) events.TraceJob {
		t.Helper()
		m, err := domain.NewMovie(id, id, frames, 25, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		m.Settings.Markers = []domain.Marker{{ID: "m1", Label: "tip", X: 0.5, Y: 0.5}}
		if err := store.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
		job := token.New()
		row, err := store.Commit(ctx, id, domain.StartTrace{JobID: job, User: domain.User{ID: "u1", Name: "U"}, Now: time.Now(), Duration: domain.DefaultLeaseDuration})
		if err != nil {
			t.Fatal(err)
		}
		return events.TraceJob{MovieID: id, JobID: job, Version: row.Version}
	}
	// handle delivers job as a received message of the queue, in an
	// invocation that ends after budget.
	handle := func(job events.TraceJob, budget time.Duration) lambdaevents.SQSEventResponse {
		t.Helper()
		body, err := events.EncodeTraceJob(job)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sq.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: &body}); err != nil {
			t.Fatal(err)
		}
		r, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, WaitTimeSeconds: 2})
		if err != nil || len(r.Messages) != 1 {
			t.Fatalf("receive: %v, %d messages", err, len(r.Messages))
		}
		m := r.Messages[0]
		ictx, done := context.WithTimeout(ctx, budget)
		defer done()
		resp, _ := w.Handle(ictx, lambdaevents.SQSEvent{Records: []lambdaevents.SQSMessage{{
			MessageId: *m.MessageId, Body: *m.Body, ReceiptHandle: *m.ReceiptHandle, Attributes: map[string]string{"ApproximateReceiveCount": "1"},
		}}})
		return resp
	}

	handle(start("ops-short", 20), time.Minute)
	handle(start("ops-long", 300), 6*time.Second)
	if resp := handle(start("ops-late", 20), time.Second); len(resp.BatchItemFailures) != 1 {
		t.Fatalf("a job with less time than the start reserve was not left for redelivery: %+v", resp)
	}
	for id, want := range map[string]domain.Status{"ops-short": domain.StatusTraced, "ops-long": domain.StatusTracing} {
		if m, err := store.Get(ctx, id); err != nil || m.Status != want {
			t.Fatalf("%s: %s, %v; want %s", id, m.Status, err, want)
		}
	}

	unlisted, unseen, err := counter.CompareWithList("testdata/aws-operations.txt")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("operations sent: %v", counter.Snapshot())
	if len(unlisted)+len(unseen) > 0 {
		t.Errorf("sent but not listed in testdata/aws-operations.txt: %v; listed but not sent: %v", unlisted, unseen)
	}
}

package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/internal/wiring"
	"github.com/movietrace/tracinglocks/functions/testkit/awscount"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// TestWorkerOperationsAreListed runs the worker as the Lambda wires it
// (wiring.Tracer and wiring.Worker on clients from the same configuration,
// the synthetic tracer) with a request counter on its AWS clients, against
// the emulators: one job traced to its end, one whose invocation ends
// (a 6 s deadline, a 2 s stop margin, 300 frames at 20 ms) so that it
// hands off to a continuation, and one left for redelivery (less time than
// the start reserve). testdata/aws-operations.txt must list exactly the
// operations sent (infra/stack's TestFunctionCallsAreAllowed checks
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
	counter := awscount.Named(vars)
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
	videoTraceFromALaterFrame(ctx, t, vars, counter, store, sq, q.QueueUrl)
	handle(start("ops-long", 300), 6*time.Second)
	if resp := handle(start("ops-late", 20), time.Second); len(resp.BatchItemFailures) != 1 {
		t.Fatalf("a job with less time than the start reserve was not left for redelivery: %+v", resp)
	}
	for id, want := range map[string]domain.Status{"ops-short": domain.StatusTraced, "ops-long": domain.StatusTracing} {
		if m, err := store.Get(ctx, id); err != nil || m.Status != want {
			t.Fatalf("%s: %s, %v; want %s", id, m.Status, err, want)
		}
	}

	// The video tracer's checkpoints: a trace from a frame after the key
	// frame looks for a saved state first and finds none (404).
	unlisted, unseen, err := counter.CompareWithList("testdata/aws-operations.txt")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("calls sent: %v", counter.Calls())
	if len(unlisted)+len(unseen) > 0 {
		t.Errorf("sent but not listed in testdata/aws-operations.txt: %v; listed but not sent: %v", unlisted, unseen)
	}
}

// videoTraceFromALaterFrame traces a real clip with the video tracer (the
// worker as the Lambda wires it with MOVIES_BUCKET set, reading the movie's
// rendition: its chunks under frames/, as the ingest stores them), then retraces it from frame 10 (its key
// frame is 0): the tracer looks for a checkpoint before frame 10 and finds none,
// which S3 answers 404 only to a role allowed s3:ListBucket (issue 23).
func videoTraceFromALaterFrame(ctx context.Context, t *testing.T, vars map[string]string, counter *awscount.Counter,
	store *dynamo.MovieStore, sq *sqs.Client, queueURL *string) {
	t.Helper()
	s3c := testenv.S3(t)
	bucket := strings.ReplaceAll(strings.ToLower(testenv.UniqueName(t, "worker-ops")), "_", "-")
	bucket = strings.Trim(bucket[:min(len(bucket), 63)], "-")
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	clip := filepath.Join(t.TempDir(), "clip.mp4")
	const frames = 30
	if err := videotest.Encode(ctx, clip, videotest.Options{Width: 64, Height: 48, FrameRate: 25, Frames: frames}, func(i int, g []byte) {
		for p := range g {
			g[p] = byte((p%64 + i) * 3)
		}
	}); err != nil {
		t.Fatal(err)
	}
	// The ingest's rendition of the clip (chunks of 10 frames), and no
	// upload: the tracer reads only the rendition.
	const id = "ops-video"
	prep, err := media.Prepare(ctx, clip, media.PrepareOptions{ChunkFrames: 10, ExpectedFrames: frames, FrameRate: 25},
		func(ctx context.Context, c media.Chunk) error {
			body, err := os.ReadFile(c.Path)
			if err != nil {
				return err
			}
			_, err = s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(media.ChunkKey(id, c.Index)), Body: bytes.NewReader(body)})
			return err
		})
	if err != nil || !prep.Done || prep.NextFrame != frames {
		t.Fatalf("prepare: %+v %v", prep, err)
	}
	videoVars := map[string]string{envvar.MoviesBucket: bucket, envvar.S3Endpoint: os.Getenv(envvar.S3Endpoint)}
	for k, v := range vars {
		if k != envvar.Tracer && k != envvar.TracerFrameDelay {
			videoVars[k] = v
		}
	}
	getenv := func(k string) string { return videoVars[k] }
	cfg, err := config.FromEnv(getenv, envvar.MoviesTable, envvar.FramesTable, envvar.TraceQueueURL, envvar.MoviesBucket)
	if err != nil {
		t.Fatal(err)
	}
	counter.Name(envvar.MoviesBucket, bucket)
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
	m, err := domain.NewMovie(id, id, frames, 25, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "m1", Label: "tip", X: 0.5, Y: 0.5}}
	m.Video = &domain.Video{Width: prep.Width, Height: prep.Height, Codec: "h264", ChunkFrames: 10}
	if err := store.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	for _, from := range []int{0, 10} { // a trace, then a retrace from frame 10
		job := token.New()
		row, err := store.Commit(ctx, id, domain.StartTrace{JobID: job, User: domain.User{ID: "u1", Name: "U"}, Now: time.Now(),
			Duration: domain.DefaultLeaseDuration, FromFrame: from})
		if err != nil {
			t.Fatal(err)
		}
		msg, err := events.EncodeTraceJob(events.TraceJob{MovieID: id, JobID: job, Version: row.Version})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sq.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: queueURL, MessageBody: &msg}); err != nil {
			t.Fatal(err)
		}
		r, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queueURL, WaitTimeSeconds: 2})
		if err != nil || len(r.Messages) != 1 {
			t.Fatalf("receive: %v", err)
		}
		ictx, done := context.WithTimeout(ctx, time.Minute)
		_, err = w.Handle(ictx, lambdaevents.SQSEvent{Records: []lambdaevents.SQSMessage{{
			MessageId: *r.Messages[0].MessageId, Body: *r.Messages[0].Body, ReceiptHandle: *r.Messages[0].ReceiptHandle,
			Attributes: map[string]string{"ApproximateReceiveCount": "1"},
		}}})
		done()
		if err != nil {
			t.Fatal(err)
		}
		if got, err := store.Get(ctx, id); err != nil || got.Status != domain.StatusTraced {
			t.Fatalf("video trace from %d: %s, %v (last job %+v)", from, got.Status, err, got.LastJob)
		}
	}
}

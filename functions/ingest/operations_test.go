package main

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/queue"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/testkit/awscount"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// TestIngestOperationsAreListed uploads a real clip through the presigned
// PUT, as a browser does, and hands its S3 notification to the handler
// build() makes for Lambda, with a request counter on its AWS clients,
// then each continuation it sends itself on the upload queue (a 1-second
// INGEST_INVOCATION_SECONDS): the movie becomes ready. testdata/aws-operations.txt must list exactly
// the operations sent (infra/stack's TestFunctionCallsAreAllowed
// checks them against the ingest role's grants).
func TestIngestOperationsAreListed(t *testing.T) {
	ddb, sq, s3c := testenv.DynamoDB(t), testenv.SQS(t), testenv.S3(t)
	ctx := t.Context()
	tables := testenv.NewTables(t, ddb)
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(testenv.UniqueName(t, "uploads"))})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := sq.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	arn := attrs.Attributes["QueueArn"]
	bucket := strings.ToLower(strings.ReplaceAll(testenv.UniqueName(t, "movies"), "_", "-"))
	if err := s3store.CreateBucket(ctx, s3c, bucket, arn, s3store.UploadPrefix); err != nil {
		t.Fatal(err)
	}
	receive := func() lambdaevents.SQSEvent {
		t.Helper()
		out, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 2,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		var ev lambdaevents.SQSEvent
		for _, m := range out.Messages {
			ev.Records = append(ev.Records, queue.LambdaMessage(m, arn, "us-east-1"))
		}
		return ev
	}
	receive() // the bucket configuration's s3:TestEvent

	// A clip whose ingest takes more than one 1-second budget
	// (INGEST_INVOCATION_SECONDS=1 below), so it continues through the
	// upload queue: 170 frames of 1280x720 (three chunks, the last short)
	// take 2-3 CPU-seconds to prepare, and each range stores one chunk at
	// least.
	clip := filepath.Join(t.TempDir(), "clip.mp4")
	if out, err := exec.CommandContext(ctx, "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30",
		"-frames:v", "170", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", clip).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}
	file, err := os.ReadFile(clip)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c := domain.CreateMovie{ID: "ops-upload", Title: "Ops", MaxBytes: 1 << 30, Now: now,
		Upload: domain.Upload{FileName: "clip.mp4", ContentType: "video/mp4", SizeBytes: int64(len(file)), ExpiresAt: now.Add(time.Hour)}}
	movies := dynamo.NewMovieStore(ddb, tables.Movies)
	if err := movies.Create(ctx, c.Movie()); err != nil {
		t.Fatal(err)
	}
	files, err := s3store.New(s3store.Options{Client: s3c, Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	url, headers, err := files.PresignUploadURL(ctx, c.ID, "video/mp4", int64(len(file)), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, url, bytes.NewReader(file))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("presigned PUT: %v %v", res, err)
	}
	res.Body.Close()

	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	t.Setenv(envvar.IngestInvocationSeconds, "1")
	vars := map[string]string{envvar.MoviesTable: tables.Movies, envvar.MoviesBucket: bucket, envvar.UploadQueueURL: *q.QueueUrl,
		envvar.DynamoDBEndpoint: os.Getenv(envvar.DynamoDBEndpoint), envvar.S3Endpoint: os.Getenv(envvar.S3Endpoint),
		envvar.SQSEndpoint: os.Getenv(envvar.SQSEndpoint)}
	counter := awscount.Named(vars)
	h, _, err := build(ctx, func(k string) string { return vars[k] }, func(c *aws.Config) { c.APIOptions = append(c.APIOptions, counter.APIOption) })
	if err != nil {
		t.Fatal(err)
	}
	// The notification, then each continuation the ingest sends itself,
	// until the movie is ready.
	ranges := 0
	for m, err := movies.Get(ctx, c.ID); m.Status != domain.StatusReady; m, err = movies.Get(ctx, c.ID) {
		if err != nil || m.Status != domain.StatusAwaitingUpload || ranges > 20 {
			t.Fatalf("after %d ranges: %s %v", ranges, m.Status, err)
		}
		ev := receive()
		if len(ev.Records) == 0 {
			t.Fatalf("after %d ranges: no message (%d of %d frames prepared)", ranges, m.Progress.FramesWritten, m.Progress.TotalFrames)
		}
		if resp, err := h.Handle(ctx, ev); err != nil || len(resp.BatchItemFailures) > 0 {
			t.Fatalf("handle: %+v, %v", resp, err)
		}
		ranges += len(ev.Records)
		for _, r := range ev.Records {
			if _, err := sq.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: &r.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ranges < 2 {
		t.Fatalf("the ingest ran in %d range: no continuation was sent (the clip took less than the budget)", ranges)
	}
	t.Logf("ready after %d ranges", ranges)
	unlisted, unseen, err := counter.CompareWithList("testdata/aws-operations.txt")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("calls sent: %v", counter.Calls())
	if len(unlisted)+len(unseen) > 0 {
		t.Errorf("sent but not listed in testdata/aws-operations.txt: %v; listed but not sent: %v", unlisted, unseen)
	}
}

package s3store_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// newBucket creates a bucket on the emulator whose uploads/ objects notify
// a fresh queue, and returns the store and the queue URL.
func newBucket(t *testing.T) (*s3store.Store, string, *sqs.Client) {
	t.Helper()
	ctx := t.Context()
	sq := testenv.SQS(t)
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(testenv.UniqueName(t, "uploads"))})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := sq.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	bucket := strings.ToLower(strings.ReplaceAll(testenv.UniqueName(t, "movies"), "_", "-"))
	client := testenv.S3(t)
	if err := s3store.CreateBucket(ctx, client, bucket, attrs.Attributes["QueueArn"], "uploads/"); err != nil {
		t.Fatal(err)
	}
	st, err := s3store.New(s3store.Options{Client: client, Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	return st, aws.ToString(q.QueueUrl), sq
}

// receive returns the bodies of the messages on the queue, waiting up to 2 s.
func receive(t *testing.T, sq *sqs.Client, url string) []string {
	t.Helper()
	out, err := sq.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 2})
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, m := range out.Messages {
		bodies = append(bodies, aws.ToString(m.Body))
		if _, err := sq.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
	}
	return bodies
}

// The emulator is what the local stack relies on: a presigned PUT from a
// plain HTTP client stores the object, S3 sends the AWS-shaped event to
// SQS (decoded here with aws-lambda-go's events.S3Event), a presigned GET
// reads it back, and deletion by prefix removes it.
func TestPresignedUploadNotifiesAndDownloads(t *testing.T) {
	st, queueURL, sq := newBucket(t)
	ctx := t.Context()
	// Configuring the notification sends S3's test event first.
	if got := receive(t, sq, queueURL); len(got) != 1 || !strings.Contains(got[0], `"s3:TestEvent"`) {
		t.Fatalf("after configuring: %q, want one s3:TestEvent", got)
	}

	body := bytes.Repeat([]byte("frame"), 3000)
	put, err := st.PresignPut(ctx, "uploads/m1", "video/mp4", int64(len(body)), 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if put.Method != http.MethodPut || !strings.Contains(put.URL, "X-Amz-Signature=") || put.Headers["Content-Type"] != "video/mp4" {
		t.Fatalf("presigned PUT = %+v", put)
	}
	req, _ := http.NewRequestWithContext(ctx, put.Method, put.URL, bytes.NewReader(body))
	for k, v := range put.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %s", resp.Status)
	}

	got := receive(t, sq, queueURL)
	if len(got) != 1 {
		t.Fatalf("after the PUT: %d messages, want 1: %q", len(got), got)
	}
	var ev events.S3Event
	if err := json.Unmarshal([]byte(got[0]), &ev); err != nil {
		t.Fatal(err)
	}
	if len(ev.Records) != 1 {
		t.Fatalf("records: %+v", ev)
	}
	r := ev.Records[0]
	if r.EventSource != "aws:s3" || r.EventName != "ObjectCreated:Put" || r.S3.Bucket.Name != st.Bucket() ||
		r.S3.Object.Key != "uploads/m1" || r.S3.Object.Size != int64(len(body)) {
		t.Fatalf("record = %+v", r)
	}

	// Objects outside the prefix notify nothing.
	if err := st.Put(ctx, "frames/m1/0.png", "image/png", []byte("png")); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, sq, queueURL); len(got) != 0 {
		t.Fatalf("a frame write notified: %q", got)
	}

	get, err := st.PresignGet(ctx, "uploads/m1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get(get)
	if err != nil {
		t.Fatal(err)
	}
	back, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(back, body) {
		t.Fatalf("GET: %s, %d bytes", resp.Status, len(back))
	}
	obj, err := st.Head(ctx, "uploads/m1")
	if err != nil || obj.Size != int64(len(body)) || obj.ContentType != "video/mp4" {
		t.Fatalf("Head = %+v, %v", obj, err)
	}

	for _, prefix := range []string{"uploads/m1", "frames/m1/"} {
		if n, err := st.DeletePrefix(ctx, prefix); err != nil || n != 1 {
			t.Fatalf("DeletePrefix(%s) = %d, %v", prefix, n, err)
		}
	}
	if _, err := st.Head(ctx, "uploads/m1"); err != s3store.ErrNotFound {
		t.Fatalf("Head after delete: %v", err)
	}
	if _, err := st.DeletePrefix(ctx, ""); err == nil {
		t.Fatal("DeletePrefix(\"\") deleted the bucket's objects")
	}
}

// A body over fauxqs's own 11 MiB limit still uploads (video/*).
func TestLargeUpload(t *testing.T) {
	st, _, _ := newBucket(t)
	body := bytes.Repeat([]byte{7}, 12<<20)
	put, err := st.PresignPut(t.Context(), "uploads/big", "video/mp4", int64(len(body)), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), put.Method, put.URL, bytes.NewReader(body))
	for k, v := range put.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT of 12 MiB: %s", resp.Status)
	}
	if obj, err := st.Head(t.Context(), "uploads/big"); err != nil || obj.Size != int64(len(body)) {
		t.Fatalf("Head = %+v, %v", obj, err)
	}
}

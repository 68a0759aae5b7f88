package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/functions/internal/queue"
)

// TestRequeueOnTheEmulator: a received message requeued with delay 0 comes
// back at once, although the queue's visibility timeout is a minute; the
// delay is clamped to SQS's range.
func TestRequeueOnTheEmulator(t *testing.T) {
	client, url, jobs := queueWithOneMessage(t, 60)
	ctx := context.Background()
	receive := func() int {
		t.Helper()
		r, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Messages) == 1 {
			if err := jobs.Requeue(ctx, *r.Messages[0].ReceiptHandle, -time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		return len(r.Messages)
	}
	for range 2 {
		if receive() != 1 {
			t.Fatal("the requeued message did not come back at once")
		}
	}
	if err := jobs.Requeue(ctx, "garbage", time.Second); err == nil {
		t.Fatal("a garbage receipt handle was accepted")
	}
	if _, err := queue.NewJobs(client, ""); err == nil {
		t.Fatal("no URL accepted")
	}
}

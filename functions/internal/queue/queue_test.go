package queue_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/functions/internal/queue"
	"github.com/movietrace/tracinglocks/functions/internal/testenv"
)

// TestRequeueOnTheEmulator: a received message requeued with delay 0 comes
// back at once, although the queue's visibility timeout is a minute; the
// delay is clamped to SQS's range.
func TestRequeueOnTheEmulator(t *testing.T) {
	client := testenv.SQS(t)
	ctx := context.Background()
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName:  aws.String(testenv.UniqueName(t, "requeue")),
		Attributes: map[string]string{"VisibilityTimeout": strconv.Itoa(60)},
	})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := queue.NewJobs(client, *out.QueueUrl)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: out.QueueUrl, MessageBody: aws.String("{}")}); err != nil {
		t.Fatal(err)
	}
	receive := func() int {
		t.Helper()
		r, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: out.QueueUrl, WaitTimeSeconds: 2})
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

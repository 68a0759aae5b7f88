package queue_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/movietrace/tracinglocks/functions/internal/queue"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// TestRequeueDelayHoldsTheMessage: on the emulator, a message requeued with
// a real delay stays invisible although the queue's own visibility timeout
// is 0, so the worker's requeue delay (not the queue's default) decides
// when a deferred job comes back. (Absence is checked at once, against a
// delay of ten minutes: no race with a slow machine.)
func TestRequeueDelayHoldsTheMessage(t *testing.T) {
	client, url, jobs := queueWithOneMessage(t, 0)
	ctx := context.Background()
	r, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 5, VisibilityTimeout: 0})
	if err != nil || len(r.Messages) != 1 {
		t.Fatalf("receive: %d messages, %v", len(r.Messages), err)
	}
	if err := jobs.Requeue(ctx, *r.Messages[0].ReceiptHandle, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	again, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Messages) != 0 {
		t.Fatal("a message requeued for ten minutes came back at once")
	}
	attrs, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	if n := attrs.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)]; n != "1" {
		t.Errorf("%s messages in flight, want the requeued one", n)
	}
}

// visibilityRecorder records the visibility timeouts Requeue asks for.
type visibilityRecorder struct {
	queue.API
	got []int32
}

func (v *visibilityRecorder) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	v.got = append(v.got, in.VisibilityTimeout)
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

// TestRequeueDelayInWholeSeconds: the delay goes to SQS in whole seconds,
// cut down (never a longer wait than asked), within SQS's 0-12 h.
func TestRequeueDelayInWholeSeconds(t *testing.T) {
	rec := &visibilityRecorder{}
	jobs, err := queue.NewJobs(rec, "https://queue.invalid/q")
	if err != nil {
		t.Fatal(err)
	}
	delays := []time.Duration{2 * time.Second, 30 * time.Second, 1900 * time.Millisecond, 0, -time.Hour, 13 * time.Hour, queue.MaxVisibility}
	want := []int32{2, 30, 1, 0, 0, 43200, 43200}
	for _, d := range delays {
		if err := jobs.Requeue(context.Background(), "rh", d); err != nil {
			t.Fatal(err)
		}
	}
	for i := range want {
		if rec.got[i] != want[i] {
			t.Errorf("Requeue(%v) asked for %d s, want %d", delays[i], rec.got[i], want[i])
		}
	}
}

// queueWithOneMessage creates a queue on the emulator with the given
// visibility timeout (seconds), sends it one message and returns the
// client, the queue's URL and the Jobs adapter on it.
func queueWithOneMessage(t *testing.T, visibility int) (*sqs.Client, string, *queue.Jobs) {
	t.Helper()
	client := testenv.SQS(t)
	out, err := client.CreateQueue(t.Context(), &sqs.CreateQueueInput{
		QueueName:  aws.String(testenv.UniqueName(t, "requeue")),
		Attributes: map[string]string{"VisibilityTimeout": strconv.Itoa(visibility)},
	})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := queue.NewJobs(client, *out.QueueUrl)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: out.QueueUrl, MessageBody: aws.String("{}")}); err != nil {
		t.Fatal(err)
	}
	return client, *out.QueueUrl, jobs
}

package queue_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/movietrace/tracinglocks/functions/internal/queue"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// newQueue creates a queue on the SQS emulator and returns its URL.
func newQueue(t *testing.T, client *sqs.Client, prefix string) string {
	t.Helper()
	out, err := client.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(testenv.UniqueName(t, prefix))})
	if err != nil {
		t.Fatal(err)
	}
	return *out.QueueUrl
}

// drain receives and deletes every message of url and returns the bodies
// (with the value of attribute "kind", when set, after a '|').
func drain(t *testing.T, client *sqs.Client, url string) []string {
	t.Helper()
	var out []string
	for {
		r, err := client.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{
			QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Messages) == 0 {
			slices.Sort(out)
			return out
		}
		for _, m := range r.Messages {
			body := *m.Body
			if a, ok := m.MessageAttributes["kind"]; ok {
				body += "|" + aws.ToString(a.StringValue)
			}
			out = append(out, body)
			if _, err := client.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestRedriveOnTheEmulator: 23 messages on a dead-letter queue (one with a
// message attribute) all move to the target queue, bodies and attributes
// intact, and the DLQ is empty; with max, only that many move.
func TestRedriveOnTheEmulator(t *testing.T) {
	client := testenv.SQS(t)
	ctx := t.Context()
	dlq, target := newQueue(t, client, "dlq"), newQueue(t, client, "jobs")
	var want []string
	for i := range 23 {
		in := &sqs.SendMessageInput{QueueUrl: &dlq, MessageBody: aws.String(fmt.Sprintf(`{"n":%d}`, i))}
		body := *in.MessageBody
		if i == 7 {
			in.MessageAttributes = map[string]sqstypes.MessageAttributeValue{"kind": {DataType: aws.String("String"), StringValue: aws.String("seven")}}
			body += "|seven"
		}
		if _, err := client.SendMessage(ctx, in); err != nil {
			t.Fatal(err)
		}
		want = append(want, body)
	}
	slices.Sort(want)
	moved, err := queue.Redrive(ctx, client, dlq, target, 0)
	if err != nil || moved != 23 {
		t.Fatalf("Redrive: moved %d, %v; want 23", moved, err)
	}
	if got := drain(t, client, target); !slices.Equal(got, want) {
		t.Fatalf("target holds %v\nwant %v", got, want)
	}
	if left := drain(t, client, dlq); len(left) != 0 {
		t.Fatalf("the DLQ still holds %v", left)
	}

	for i := range 5 {
		if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &dlq, MessageBody: aws.String(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if moved, err := queue.Redrive(ctx, client, dlq, target, 2); err != nil || moved != 2 {
		t.Fatalf("Redrive max 2: moved %d, %v", moved, err)
	}
	if got, left := drain(t, client, target), drain(t, client, dlq); len(got) != 2 || len(left) != 3 {
		t.Fatalf("after max 2: target %v, DLQ %v", got, left)
	}
	if moved, err := queue.Redrive(ctx, client, dlq, target, 0); err != nil || moved != 0 {
		t.Fatalf("Redrive of an empty queue: %d, %v", moved, err)
	}
}

// failingDelete passes receive and send to the emulator and fails deletes.
type failingDelete struct{ *sqs.Client }

func (failingDelete) DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	return nil, errors.New("injected")
}

// TestRedriveStopsAtTheFirstError: a delete that fails stops the redrive
// with an error; the message is then on both queues (at least once) and
// bad arguments are refused.
func TestRedriveStopsAtTheFirstError(t *testing.T) {
	client := testenv.SQS(t)
	dlq, target := newQueue(t, client, "dlq"), newQueue(t, client, "jobs")
	for i := range 3 {
		if _, err := client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &dlq, MessageBody: aws.String(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	moved, err := queue.Redrive(t.Context(), failingDelete{client}, dlq, target, 0)
	if err == nil || moved != 0 {
		t.Fatalf("moved %d, %v; want 0 and the delete's error", moved, err)
	}
	if got := drain(t, client, target); len(got) != 1 {
		t.Fatalf("target holds %v, want the one message sent before the failed delete", got)
	}
	for name, args := range map[string][2]string{"no source": {"", target}, "no target": {dlq, ""}, "same queue": {dlq, dlq}} {
		if _, err := queue.Redrive(t.Context(), client, args[0], args[1], 0); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

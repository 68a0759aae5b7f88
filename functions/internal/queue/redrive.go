package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// RedriveAPI is the part of the SQS client Redrive uses.
type RedriveAPI interface {
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
}

// RedriveVisibility is how long a message Redrive received stays invisible
// on the source queue: if the send or the delete fails, it reappears there
// after this and the next run moves it.
const RedriveVisibility = 120

// Redrive moves the messages on the queue at from to the queue at to, as
// SQS's StartMessageMoveTask would (the local SQS emulator does not have
// it): receive up to ten, send each to to with the same body and message
// attributes, then delete it from from. It stops when a receive (a one-
// second long poll, which asks every SQS server) returns nothing, after max
// messages when max > 0, or at the first error, and returns how many it
// moved.
//
// It is at least once: a message sent whose delete failed is on both
// queues, and moved again by the next run. For trace jobs a duplicate is
// harmless: its claim is refused (docs/operations.md, TraceDlqDepthAlarm).
func Redrive(ctx context.Context, client RedriveAPI, from, to string, max int) (int, error) {
	if client == nil || from == "" || to == "" {
		return 0, errors.New("redrive: a client and both queue URLs are required")
	}
	if from == to {
		return 0, errors.New("redrive: the source and the target are the same queue")
	}
	moved := 0
	for max <= 0 || moved < max {
		n := int32(10)
		if max > 0 {
			n = int32(min(10, max-moved))
		}
		r, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: &from, MaxNumberOfMessages: n, WaitTimeSeconds: 1, VisibilityTimeout: RedriveVisibility,
			MessageAttributeNames: []string{"All"},
		})
		if err != nil {
			return moved, fmt.Errorf("redrive: receive: %w", err)
		}
		if len(r.Messages) == 0 {
			return moved, nil
		}
		for _, m := range r.Messages {
			if err := move(ctx, client, from, to, m); err != nil {
				return moved, err
			}
			moved++
		}
	}
	return moved, nil
}

func move(ctx context.Context, client RedriveAPI, from, to string, m sqstypes.Message) error {
	in := &sqs.SendMessageInput{QueueUrl: &to, MessageBody: m.Body}
	if len(m.MessageAttributes) > 0 {
		in.MessageAttributes = m.MessageAttributes
	}
	if _, err := client.SendMessage(ctx, in); err != nil {
		return fmt.Errorf("redrive: send: %w", err)
	}
	if _, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &from, ReceiptHandle: m.ReceiptHandle}); err != nil {
		return fmt.Errorf("redrive: delete (the message is now on both queues; the next run moves it again): %w", err)
	}
	return nil
}

// Package queue adapts the SQS trace-job queue: the worker's Queue port
// (Jobs: requeue a received message, send a continuation) and the conversion of received messages into the records Lambda's
// SQS event source delivers (LambdaMessage).
package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/events"
)

// API is the part of the SQS client Jobs uses.
type API interface {
	ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// Jobs is the trace-job queue at one URL.
type Jobs struct {
	client API
	url    string
}

// NewJobs returns the queue at url.
func NewJobs(client API, url string) (*Jobs, error) {
	if client == nil || url == "" {
		return nil, errors.New("queue: a client and a queue URL are required")
	}
	return &Jobs{client: client, url: url}, nil
}

// MaxVisibility is SQS's longest visibility timeout.
const MaxVisibility = 12 * time.Hour

// Requeue makes a received message visible again after delay (whole
// seconds, clamped to 0-12 h).
func (q *Jobs) Requeue(ctx context.Context, receiptHandle string, delay time.Duration) error {
	secs := int32(min(max(delay, 0), MaxVisibility) / time.Second)
	_, err := q.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: &q.url, ReceiptHandle: &receiptHandle, VisibilityTimeout: secs,
	})
	if err != nil {
		return fmt.Errorf("change message visibility: %w", err)
	}
	return nil
}

// Continue sends the message of a job's next segment.
func (q *Jobs) Continue(ctx context.Context, job events.TraceJob) error {
	body, err := events.EncodeTraceJob(job)
	if err != nil {
		return err
	}
	if _, err := q.client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q.url, MessageBody: &body}); err != nil {
		return fmt.Errorf("send continuation: %w", err)
	}
	return nil
}

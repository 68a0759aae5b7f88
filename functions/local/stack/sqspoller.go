package stack

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// QueueHandler is the worker's Lambda handler.
type QueueHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// QueueAPI is the part of the SQS client the poller uses.
type QueueAPI interface {
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(context.Context, *sqs.DeleteMessageBatchInput, ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
}

// MessageConverter turns a received message into the record Lambda
// delivers (the worker package owns the conversion).
type MessageConverter func(m sqstypes.Message, queueARN, region string) events.SQSMessage

// QueuePoller does locally what Lambda's SQS event source mapping does with
// FunctionResponseTypes ReportBatchItemFailures: long-poll ReceiveMessage
// (every system attribute), hand the batch to the handler as a real
// events.SQSEvent, and delete the messages that succeeded. A handler error
// deletes nothing, and so does a response naming a message ID that is not in
// the batch (Lambda then treats the whole batch as failed). Messages not
// deleted come back after the queue's visibility timeout, with a higher
// ApproximateReceiveCount.
type QueuePoller struct {
	Client   QueueAPI
	QueueURL string
	QueueARN string
	Region   string
	Handle   QueueHandler
	Convert  MessageConverter
	Log      *slog.Logger

	// BatchSize is the messages per invocation, 1-10 (default 1, as the
	// stack's event source mapping: a job never waits in an invocation
	// behind another while its lease runs out).
	BatchSize int
	Wait      time.Duration // long-poll wait, 0-20 s (default 2 s)
	Invoke    time.Duration // bounds one invocation (default 5 min)
}

// Run polls until stop ends; an invocation in flight then runs on with
// invoke.
func (p *QueuePoller) Run(stop, invoke context.Context) {
	if p.BatchSize <= 0 || p.BatchSize > 10 {
		p.BatchSize = 1
	}
	if p.Wait <= 0 || p.Wait > 20*time.Second {
		p.Wait = 2 * time.Second
	}
	if p.Invoke <= 0 {
		p.Invoke = 5 * time.Minute
	}
	for stop.Err() == nil {
		if err := p.Poll(stop, invoke); err != nil && stop.Err() == nil {
			p.Log.Warn("queue poll", slog.String("error", err.Error()))
			sleep(stop, time.Second)
		}
	}
}

// Poll receives one batch and processes it.
func (p *QueuePoller) Poll(stop, invoke context.Context) error {
	out, err := p.Client.ReceiveMessage(stop, &sqs.ReceiveMessageInput{
		QueueUrl:                    &p.QueueURL,
		MaxNumberOfMessages:         int32(p.BatchSize),
		WaitTimeSeconds:             int32(p.Wait / time.Second),
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return fmt.Errorf("receive messages: %w", err)
	}
	if len(out.Messages) == 0 {
		return nil
	}
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(out.Messages))}
	for i, m := range out.Messages {
		ev.Records[i] = p.Convert(m, p.QueueARN, p.Region)
	}
	ctx, cancel := context.WithTimeout(invoke, p.Invoke)
	resp, err := safeQueue(ctx, p.Handle, ev)
	cancel()
	if err != nil {
		p.Log.Warn("worker returned an error: no message deleted, all come back after the visibility timeout",
			slog.String("error", err.Error()), slog.Int("messages", len(ev.Records)))
		return nil
	}
	inBatch := map[string]bool{}
	for _, m := range out.Messages {
		inBatch[aws.ToString(m.MessageId)] = true
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		if !inBatch[f.ItemIdentifier] {
			p.Log.Warn("worker reported an unknown message ID: the whole batch counts as failed", slog.String("itemIdentifier", f.ItemIdentifier))
			return nil
		}
		failed[f.ItemIdentifier] = true
	}
	var entries []sqstypes.DeleteMessageBatchRequestEntry
	for i, m := range out.Messages {
		if !failed[aws.ToString(m.MessageId)] {
			entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
	}
	if len(failed) > 0 {
		p.Log.Warn("worker reported failed messages: they come back after the visibility timeout", slog.Int("failed", len(failed)))
	}
	if len(entries) == 0 {
		return nil
	}
	// The deletes are not bound to stop: what succeeded must not come back.
	del, err := p.Client.DeleteMessageBatch(context.WithoutCancel(stop), &sqs.DeleteMessageBatchInput{QueueUrl: &p.QueueURL, Entries: entries})
	if err != nil {
		return fmt.Errorf("delete %d processed messages: %w", len(entries), err)
	}
	for _, f := range del.Failed {
		p.Log.Warn("delete of a processed message failed: it will be redelivered (the worker's claim makes that a no-op)",
			slog.String("code", aws.ToString(f.Code)), slog.String("message", aws.ToString(f.Message)))
	}
	return nil
}

func safeQueue(ctx context.Context, h QueueHandler, ev events.SQSEvent) (resp events.SQSEventResponse, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("worker panicked: %v", r)
		}
	}()
	return h(ctx, ev)
}

package worker

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"
	"unicode/utf8"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/events"
)

// VisibilityAPI is the part of the SQS client Handle uses to make a message
// it leaves for redelivery visible again soon.
type VisibilityAPI interface {
	ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// maxLoggedBody bounds how much of an undecodable body is logged.
const maxLoggedBody = 1024

// Handle is the Lambda handler of the trace queue's event source mapping,
// which must have ReportBatchItemFailures on.
//
// Messages are processed one after another. The response names (by message
// ID) only the messages whose job was not claimed and may still succeed:
// the claim failed in transport, or too little time was left to start it.
// Every other message is done, whatever became of its job: a claimed job is
// claimed exactly once, so its redelivery would only be refused. When Queue
// and QueueURL are set, a message left for redelivery is also made visible
// again after RequeueDelay, so that it comes back while its lease is still
// live rather than after the queue's whole visibility timeout.
//
// Handle never returns an error: that would make Lambda redeliver the whole
// batch.
func (w *Worker) Handle(ctx context.Context, ev lambdaevents.SQSEvent) (lambdaevents.SQSEventResponse, error) {
	resp := lambdaevents.SQSEventResponse{BatchItemFailures: []lambdaevents.SQSBatchItemFailure{}}
	for _, msg := range ev.Records {
		if out := w.HandleMessage(ctx, msg); out.Redeliver() {
			resp.BatchItemFailures = append(resp.BatchItemFailures, lambdaevents.SQSBatchItemFailure{ItemIdentifier: msg.MessageId})
			w.requeue(ctx, msg)
		}
	}
	return resp, nil
}

// HandleMessage processes one message of a batch.
//
// An undecodable body can never succeed, so it is logged (an excerpt, with
// ID-shaped strings redacted) and reported done rather than redelivered until
// it lands in the dead-letter queue: that queue then holds only jobs that
// failed for a reason that might pass, which is what its alarm means.
//
// A panic that escapes the job's own recovery (a bug in the worker outside
// the traced part) is logged with its stack and the message is left for
// redelivery: before the claim that retries it, after the claim the
// redelivery is a no-op. Either way the process and the batch go on.
func (w *Worker) HandleMessage(ctx context.Context, msg lambdaevents.SQSMessage) (out Outcome) {
	defer func() {
		if p := recover(); p != nil {
			w.log.ErrorContext(ctx, "worker panicked; message left for redelivery",
				slog.String("messageId", msg.MessageId), slog.String("panic", fmt.Sprint(p)), slog.String("stack", string(debug.Stack())))
			out = Outcome{Result: ResultDeferred, Err: fmt.Errorf("panic: %v", p)}
		}
	}()
	job, err := events.DecodeTraceJob(msg.Body)
	if err != nil {
		w.log.ErrorContext(ctx, "undecodable trace-job message dropped",
			slog.String("messageId", msg.MessageId), slog.String("error", events.RedactIDs(err.Error())),
			slog.Int("bodyBytes", len(msg.Body)), slog.String("body", excerpt(msg.Body)))
		return Outcome{Result: ResultUndecodable, Err: err}
	}
	w.log.DebugContext(ctx, "trace-job message", slog.String("messageId", msg.MessageId),
		slog.String("movieId", job.MovieID), slog.String("jobId", job.JobID),
		slog.String("receiveCount", msg.Attributes["ApproximateReceiveCount"]))
	return w.Run(ctx, job)
}

func excerpt(body string) string {
	if len(body) > maxLoggedBody {
		n := maxLoggedBody
		for n > 0 && !utf8.RuneStart(body[n]) {
			n--
		}
		body = body[:n] + "..."
	}
	return events.RedactIDs(body)
}

// requeue makes a message left for redelivery visible again soon. It is
// best effort: if it fails, the message comes back after the queue's
// visibility timeout.
func (w *Worker) requeue(ctx context.Context, msg lambdaevents.SQSMessage) {
	if w.Queue == nil || w.QueueURL == "" || msg.ReceiptHandle == "" || w.RequeueDelay == nil {
		return
	}
	n, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
	delay := w.RequeueDelay(max(n, 1))
	// The invocation may be about to end (that is one reason to requeue):
	// the call gets its own short budget.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	secs := int32(min(max(delay, 0), 12*time.Hour) / time.Second)
	_, err := w.Queue.ChangeMessageVisibility(cctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: &w.QueueURL, ReceiptHandle: &msg.ReceiptHandle, VisibilityTimeout: secs,
	})
	if err != nil {
		w.log.WarnContext(ctx, "could not shorten the visibility of a message left for redelivery",
			slog.String("messageId", msg.MessageId), slog.String("error", err.Error()))
	}
}

package worker

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/events"
)

// maxLoggedBody bounds how much of an undecodable body is logged.
const maxLoggedBody = 1024

// Handle is the Lambda handler of the trace queue's event source mapping,
// which must have ReportBatchItemFailures on.
//
// The messages of a batch run concurrently, each job on its own: a job
// never waits inside an invocation behind another while its lease runs out
// (the stack's batch size is 1 anyway). The response names (by message
// ID) only the messages whose job was not claimed and may still succeed:
// the claim failed in transport, or too little time was left to start it.
// Every other message is done, whatever became of its job: a claimed job is
// claimed exactly once, so its redelivery would only be refused. When Queue
// is set, a message left for redelivery is also made visible again after
// RequeueDelay, so that it comes back while its lease is still live rather
// than after the queue's whole visibility timeout.
//
// Handle never returns an error: that would make Lambda redeliver the whole
// batch.
func (w *Worker) Handle(ctx context.Context, ev lambdaevents.SQSEvent) (lambdaevents.SQSEventResponse, error) {
	resp := lambdaevents.SQSEventResponse{BatchItemFailures: []lambdaevents.SQSBatchItemFailure{}}
	outs := make([]Outcome, len(ev.Records))
	var wg sync.WaitGroup
	for i, msg := range ev.Records {
		wg.Go(func() { outs[i] = w.HandleMessage(ctx, msg) })
	}
	wg.Wait()
	for i, msg := range ev.Records {
		if outs[i].Redeliver() {
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
			w.o.Log.ErrorContext(ctx, "worker panicked; message left for redelivery",
				slog.String("messageId", msg.MessageId), slog.String("panic", fmt.Sprint(p)), slog.String("stack", string(debug.Stack())))
			out = Outcome{Result: ResultDeferred, Err: fmt.Errorf("panic: %v", p)}
		}
	}()
	job, err := events.DecodeTraceJob(msg.Body)
	if err != nil {
		w.o.Log.ErrorContext(ctx, "undecodable trace-job message dropped",
			slog.String("messageId", msg.MessageId), slog.String("error", events.RedactIDs(err.Error())),
			slog.Int("bodyBytes", len(msg.Body)), slog.String("body", excerpt(msg.Body)))
		return Outcome{Result: ResultUndecodable, Err: err}
	}
	w.o.Log.DebugContext(ctx, "trace-job message", slog.String("messageId", msg.MessageId),
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
	if w.o.Queue == nil || msg.ReceiptHandle == "" {
		return
	}
	n, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
	delay := w.o.RequeueDelay(max(n, 1))
	// The invocation may be about to end (that is one reason to requeue):
	// the call gets its own short budget.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := w.o.Queue.Requeue(cctx, msg.ReceiptHandle, delay); err != nil {
		w.o.Log.WarnContext(ctx, "could not shorten the visibility of a message left for redelivery",
			slog.String("messageId", msg.MessageId), slog.String("error", err.Error()))
	}
}

// Package streamproc is the stream processor: it turns the movies table's
// DynamoDB Stream into trace-job SQS messages and audit items.
//
// The API only commits the movie row. Everything that follows a commit is
// derived from the row's stream record (events.Derive), so there is no dual
// write between DynamoDB and SQS: a commit that happened is in the stream,
// and the stream is retried until its effects landed.
package streamproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/emf"
	"github.com/movietrace/tracinglocks/functions/internal/retry"
	"github.com/movietrace/tracinglocks/schema"
)

// QueueAPI is the part of the SQS client the handler uses.
type QueueAPI interface {
	SendMessageBatch(context.Context, *sqs.SendMessageBatchInput, ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

// AuditAPI is the part of the DynamoDB client the handler uses.
type AuditAPI interface {
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// DefaultMaxAttempts bounds how often the handler itself tries one SQS entry
// or audit item within an invocation (each SDK call also retries transport
// errors and throttling on its own). Past it, the record is reported failed
// and Lambda retries it in a later invocation.
const DefaultMaxAttempts = 4

// Options configure a Handler. Queue, Audit, QueueURL and AuditTable are
// required.
type Options struct {
	Queue      QueueAPI // the trace queue's client (also used for the poison queue)
	Audit      AuditAPI
	QueueURL   string
	AuditTable string
	// PoisonQueueURL is where a record that can never decode is set aside
	// (see poison.go), so that it blocks nothing. Empty: such a record is
	// reported as the batch's failed record instead, and processing stops
	// at it; only the replay command, run by an operator, does that.
	PoisonQueueURL string
	// Log receives the handler's logs (default: discarded).
	Log *slog.Logger
	// MaxAttempts bounds the attempts per SQS entry and audit item
	// (default DefaultMaxAttempts).
	MaxAttempts int
	// Metrics, when set, receives the business metrics of each batch as
	// CloudWatch EMF (metrics.go): traces started, completed, failed and
	// abandoned, and poison records.
	Metrics *emf.Writer
	// Backoff is the pause before retry n (n >= 1) of entries that failed
	// for a transient reason (default: retry.Jittered, the project's one
	// backoff). Tests pass one that returns 0.
	Backoff func(n int) time.Duration
}

// Handler processes batches of movies-table stream records.
type Handler struct {
	opts Options
	log  *slog.Logger
}

// New returns a handler that enqueues jobs on opts.QueueURL and writes
// audit items to opts.AuditTable.
func New(opts Options) (*Handler, error) {
	switch {
	case opts.Queue == nil || opts.Audit == nil:
		return nil, errors.New("streamproc: Queue and Audit clients are required")
	case opts.QueueURL == "" || opts.AuditTable == "":
		return nil, errors.New("streamproc: QueueURL and AuditTable are required")
	case opts.MaxAttempts < 0:
		return nil, fmt.Errorf("streamproc: MaxAttempts %d is negative", opts.MaxAttempts)
	}
	if opts.MaxAttempts == 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.Backoff == nil {
		opts.Backoff = retry.Jittered
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Handler{opts: opts, log: opts.Log}, nil
}

// deadlineReserve is the time Handle keeps, before the invocation's
// deadline, to build and return its response.
const deadlineReserve = time.Second

// A job is one trace-job message, owed by the record that derived it.
type job struct {
	rec int
	job events.TraceJob
}

// An auditWrite is one audit item, owed by the record that derived it.
type auditWrite struct {
	rec   int
	event events.Event
}

// Handle processes one batch. It is the Lambda handler of the event source
// mapping (with ReportBatchItemFailures).
//
// Records are taken in order. A record that can never decode (a poison
// record) is logged, counted and set aside on the poison queue, and the
// records behind it are processed as if it were not there; it is reported
// failed only if it could not be set aside. The work of the records is
// batched across records
// (10 messages per SendMessageBatch, up to 100 audit items per
// TransactWriteItems). If anything fails, the response names the first
// record whose effects did not all land: every record before it took full
// effect, and Lambda retries from it. Effects of later records that did land
// are repeated by that retry, which is harmless (audit writes are
// conditional, and a worker's claim makes a duplicate message a no-op).
//
// It returns an error only when the failing record has no sequence number
// to report, so that Lambda retries the whole batch.
func (h *Handler) Handle(ctx context.Context, ev lambdaevents.DynamoDBEvent) (lambdaevents.DynamoDBEventResponse, error) {
	// Stop a little before Lambda's deadline, so that a slow batch still
	// reports what it finished instead of timing out as a whole: messages
	// stop two reserves before it, audit writes (which follow them) one.
	sendCtx, auditCtx := ctx, ctx
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) > 3*deadlineReserve {
		var cancel context.CancelFunc
		sendCtx, cancel = context.WithDeadline(ctx, deadline.Add(-2*deadlineReserve))
		defer cancel()
		auditCtx, cancel = context.WithDeadline(ctx, deadline.Add(-deadlineReserve))
		defer cancel()
	}
	recs := ev.Records
	stop := len(recs) // index of the first record that did not take full effect
	var jobs []job
	var audits []auditWrite
	seenJob := map[string]bool{}
	seenKey := map[string]bool{}
	counts := map[events.EventType]int{}
	poison := 0
	for i, rec := range recs {
		change, err := schema.DecodeRecord(rec)
		if err != nil {
			// A poison record: set aside, it blocks nothing behind it.
			poison++
			if !h.setAside(sendCtx, i, rec, err) {
				stop = i
				break
			}
			continue
		}
		for _, e := range events.Derive(change.Old, change.New) {
			counts[e.Type]++
			// A record repeated within one batch (a replay file, a re-driven
			// batch) owes nothing its first copy does not already owe.
			if e.Type == events.TracingStarted && !seenJob[e.JobID] {
				seenJob[e.JobID] = true
				jobs = append(jobs, job{i, e.Job()})
			}
			if k := e.MovieID + "\x00" + e.AuditKey(); !seenKey[k] {
				seenKey[k] = true
				audits = append(audits, auditWrite{i, e})
			}
		}
	}

	sent, failedJob := h.enqueue(sendCtx, jobs, stop)
	stop = min(stop, failedJob)
	written, present, failedAudit := h.writeAudit(auditCtx, audits, stop)
	stop = min(stop, failedAudit)

	attrs := []any{
		slog.Int("records", len(recs)), slog.Int("started", counts[events.TracingStarted]),
		slog.Int("completed", counts[events.TracingCompleted]), slog.Int("failed", counts[events.TracingFailed]),
		slog.Int("abandoned", counts[events.TracingAbandoned]), slog.Int("messagesSent", sent),
		slog.Int("auditWritten", written), slog.Int("auditAlreadyPresent", present), slog.Int("poison", poison),
	}
	h.emitMetrics(ctx, counts, poison)
	resp := lambdaevents.DynamoDBEventResponse{BatchItemFailures: []lambdaevents.DynamoDBBatchItemFailure{}}
	if stop == len(recs) {
		h.log.InfoContext(ctx, "stream batch processed", attrs...)
		return resp, nil
	}
	seq := recs[stop].Change.SequenceNumber
	h.log.WarnContext(ctx, "stream batch partially processed",
		append(attrs, slog.Int("failedIndex", stop), slog.String("failedSequenceNumber", seq))...)
	if seq == "" {
		return resp, fmt.Errorf("stream record %d failed and has no sequence number: retrying the whole batch", stop)
	}
	resp.BatchItemFailures = append(resp.BatchItemFailures, lambdaevents.DynamoDBBatchItemFailure{ItemIdentifier: seq})
	return resp, nil
}

// pause waits before retry n, or returns false if ctx ends first.
func (h *Handler) pause(ctx context.Context, n int) bool {
	d := h.opts.Backoff(n)
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (h *Handler) attempts() int { return max(h.opts.MaxAttempts, 1) }

// errorCode is the AWS error code of err, for logs.
func errorCode(err error) string {
	var coded interface{ ErrorCode() string }
	if errors.As(err, &coded) {
		return coded.ErrorCode()
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return "context"
	}
	return "unknown"
}

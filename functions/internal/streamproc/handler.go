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
	"math/rand/v2"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/events"
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

// Handler processes batches of movies-table stream records.
type Handler struct {
	queue      QueueAPI
	audit      AuditAPI
	queueURL   string
	auditTable string
	log        *slog.Logger

	// MaxAttempts bounds the attempts per SQS entry and audit item.
	MaxAttempts int
	// Backoff is the pause before retry n (n >= 1) of entries that failed
	// for a transient reason. Tests set it to zero.
	Backoff func(n int) time.Duration
}

// New returns a handler that enqueues jobs on queueURL and writes audit
// items to auditTable.
func New(queue QueueAPI, audit AuditAPI, queueURL, auditTable string, log *slog.Logger) *Handler {
	return &Handler{
		queue: queue, audit: audit, queueURL: queueURL, auditTable: auditTable, log: log,
		MaxAttempts: DefaultMaxAttempts, Backoff: jittered,
	}
}

// deadlineReserve is the time Handle keeps, before the invocation's
// deadline, to build and return its response.
const deadlineReserve = time.Second

// jittered is capped exponential backoff with full jitter: 0-50 ms, 0-100 ms, ...
func jittered(n int) time.Duration {
	ceiling := min(50*time.Millisecond<<(n-1), time.Second)
	return rand.N(ceiling) + time.Millisecond
}

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
// Records are taken in order. Decoding stops at the first record that can
// never decode; the work of the records before it is batched across records
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
	for i, rec := range recs {
		change, err := events.DecodeRecord(rec)
		if err != nil {
			h.logUndecodable(ctx, i, rec, err)
			stop = i
			break
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
		slog.Int("auditWritten", written), slog.Int("auditAlreadyPresent", present),
	}
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

// logUndecodable logs a record that can never be processed, in full but
// without lease IDs, so that it can be diagnosed and re-driven once fixed.
// The event source mapping's retry limit and on-failure destination take
// it from there.
func (h *Handler) logUndecodable(ctx context.Context, i int, rec lambdaevents.DynamoDBEventRecord, err error) {
	attrs := []any{
		slog.Int("index", i), slog.String("sequenceNumber", rec.Change.SequenceNumber),
		slog.String("eventID", rec.EventID), slog.String("eventName", rec.EventName),
		slog.String("error", events.RedactIDs(err.Error())),
	}
	if b, rerr := events.RedactRecord(rec); rerr == nil {
		attrs = append(attrs, slog.Any("record", b))
	} else {
		attrs = append(attrs, slog.String("recordError", rerr.Error()))
	}
	h.log.ErrorContext(ctx, "undecodable stream record", attrs...)
}

// pause waits before retry n, or returns false if ctx ends first.
func (h *Handler) pause(ctx context.Context, n int) bool {
	if h.Backoff == nil {
		return ctx.Err() == nil
	}
	d := h.Backoff(n)
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

func (h *Handler) attempts() int { return max(h.MaxAttempts, 1) }

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

package streamproc

import (
	"context"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/movietrace/tracinglocks/events"
)

// MaxMessagesPerBatch is SendMessageBatch's limit on entries per request.
const MaxMessagesPerBatch = 10

// enqueue sends one message per job owed by a record before stop, 10 per
// SendMessageBatch. Entry IDs are the job IDs: unique within a request
// (jobs are deduplicated) and valid entry IDs (32 hex digits; at most 80 of
// [A-Za-z0-9_-] are allowed). The queue is a standard queue, so there is no
// MessageDeduplicationId; the worker's claim makes a duplicate harmless.
//
// It returns the number of messages sent and the index of the first record
// with a message that could not be sent (stop if none). Jobs come in record
// order, so nothing past a failed request is sent: those records are
// retried anyway.
func (h *Handler) enqueue(ctx context.Context, jobs []job, stop int) (sent, failed int) {
	failed = stop
	for start := 0; start < len(jobs); start += MaxMessagesPerBatch {
		chunk := jobs[start:min(start+MaxMessagesPerBatch, len(jobs))]
		if chunk[0].rec >= failed {
			break
		}
		var n, f int
		n, f = h.sendChunk(ctx, chunk, failed)
		sent += n
		if f < failed {
			failed = f
			break
		}
	}
	return sent, failed
}

// sendChunk sends at most 10 jobs (those owed by records before stop),
// retrying entries that failed for a transient reason. It returns the
// number sent and the lowest record index among the entries that were
// never sent (stop if none).
func (h *Handler) sendChunk(ctx context.Context, chunk []job, stop int) (sent, failed int) {
	failed = stop
	pending := map[string]job{}
	var entries []sqstypes.SendMessageBatchRequestEntry
	for _, j := range chunk {
		if j.rec >= stop {
			continue
		}
		body, err := events.EncodeTraceJob(j.job)
		if err != nil { // cannot happen for a struct of strings and ints
			failed = min(failed, j.rec)
			continue
		}
		pending[j.job.JobID] = j
		entries = append(entries, sqstypes.SendMessageBatchRequestEntry{
			Id: aws.String(j.job.JobID), MessageBody: aws.String(body),
		})
	}
	permanent := map[string]bool{}
	for attempt := 1; len(entries) > 0; attempt++ {
		out, err := h.opts.Queue.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &h.opts.QueueURL, Entries: entries})
		if err != nil {
			h.log.WarnContext(ctx, "SendMessageBatch failed", slog.Int("entries", len(entries)),
				slog.Int("attempt", attempt), slog.String("code", errorCode(err)))
		} else {
			for _, ok := range out.Successful {
				if _, owed := pending[aws.ToString(ok.Id)]; owed {
					delete(pending, aws.ToString(ok.Id))
					sent++
				}
			}
			for _, bad := range out.Failed {
				h.log.WarnContext(ctx, "trace job not enqueued", slog.String("jobId", aws.ToString(bad.Id)),
					slog.String("code", aws.ToString(bad.Code)), slog.Bool("senderFault", bad.SenderFault),
					slog.Int("attempt", attempt))
				if bad.SenderFault {
					permanent[aws.ToString(bad.Id)] = true // the same entry would fail again
				}
			}
		}
		// Retry what is neither sent nor refused for good, including an
		// entry the response did not mention at all.
		var retry []sqstypes.SendMessageBatchRequestEntry
		for _, e := range entries {
			if _, owed := pending[aws.ToString(e.Id)]; owed && !permanent[aws.ToString(e.Id)] {
				retry = append(retry, e)
			}
		}
		if len(retry) == 0 || attempt >= h.attempts() || !h.pause(ctx, attempt) {
			break
		}
		entries = retry
	}
	// Whatever is still pending was not sent: neither in Successful nor
	// retried to success (a response that omits an entry counts as failed).
	for _, j := range pending {
		failed = min(failed, j.rec)
	}
	return sent, failed
}

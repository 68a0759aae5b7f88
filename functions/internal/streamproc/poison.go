package streamproc

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/schema"
)

// Poison records.
//
// A stream record that can never decode (a malformed row written by a bug
// or by hand) fails the same way on every retry. Reporting it as a batch
// item failure would make Lambda retry from its sequence number: the shard
// stays blocked behind it until MaximumRetryAttempts, and then the event
// source mapping skips it together with every record of the batch behind it
// (the on-failure destination gets only their shard range). So a poison
// record is never reported once it is set aside: the handler logs it
// (lease IDs redacted), counts it in the batch's log line, sends a
// PoisonRecord message to the poison queue, and goes on with the next
// record. Only if that send fails is the record reported failed, so that it
// is never lost silently; the retry sets it aside again (the poison queue
// may then hold it twice, which is harmless).

// PoisonRecord is the body of a poison-queue message: enough to find the
// record again (its stream and sequence number, readable with the Streams
// API for 24 hours) and to see why it failed. Record is the stream record
// with every lease ID redacted (schema.RedactRecord), omitted when it would
// make the message too large for SQS.
type PoisonRecord struct {
	EventSourceARN string          `json:"eventSourceArn"`
	SequenceNumber string          `json:"sequenceNumber"`
	EventID        string          `json:"eventId"`
	EventName      string          `json:"eventName"`
	Error          string          `json:"error"`
	Record         json.RawMessage `json:"record,omitempty"`
	RecordOmitted  string          `json:"recordOmitted,omitempty"`
}

// maxPoisonRecordBytes bounds the redacted record carried in a poison
// message, well under SQS's 256 KiB message limit; a bigger record (two
// images of up to 400 KB each) is only named.
const maxPoisonRecordBytes = 200 << 10

// setAside logs a record that can never be processed and sends it to the
// poison queue. It returns true when the record may be skipped: it is on
// the poison queue. With no poison queue configured it returns false.
func (h *Handler) setAside(ctx context.Context, i int, rec lambdaevents.DynamoDBEventRecord, decodeErr error) bool {
	msg := PoisonRecord{
		EventSourceARN: rec.EventSourceArn, SequenceNumber: rec.Change.SequenceNumber,
		EventID: rec.EventID, EventName: rec.EventName, Error: events.RedactIDs(decodeErr.Error()),
	}
	attrs := []any{
		slog.Int("index", i), slog.String("sequenceNumber", msg.SequenceNumber),
		slog.String("eventID", msg.EventID), slog.String("eventName", msg.EventName), slog.String("error", msg.Error),
	}
	if b, err := schema.RedactRecord(rec); err != nil {
		msg.RecordOmitted = err.Error()
		attrs = append(attrs, slog.String("recordError", err.Error()))
	} else {
		attrs = append(attrs, slog.Any("record", b))
		if len(b) <= maxPoisonRecordBytes {
			msg.Record = b
		} else {
			msg.RecordOmitted = fmt.Sprintf("%d bytes: read it from the stream by its sequence number", len(b))
		}
	}
	if h.opts.PoisonQueueURL == "" {
		h.log.ErrorContext(ctx, "undecodable stream record", append(attrs, slog.Bool("setAside", false))...)
		return false
	}
	err := h.sendPoison(ctx, msg)
	h.log.ErrorContext(ctx, "undecodable stream record", append(attrs, slog.Bool("setAside", err == nil))...)
	if err != nil {
		h.log.ErrorContext(ctx, "poison record not set aside: reporting it failed", slog.Int("index", i),
			slog.String("sequenceNumber", msg.SequenceNumber), slog.String("code", errorCode(err)),
			slog.String("error", events.RedactIDs(err.Error())))
		return false
	}
	return true
}

// sendPoison sends one poison message, retrying a transient failure like
// any other entry.
func (h *Handler) sendPoison(ctx context.Context, msg PoisonRecord) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	entry := sqstypes.SendMessageBatchRequestEntry{Id: aws.String("poison"), MessageBody: aws.String(string(body))}
	for attempt := 1; ; attempt++ {
		out, err := h.opts.Queue.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{
			QueueUrl: &h.opts.PoisonQueueURL, Entries: []sqstypes.SendMessageBatchRequestEntry{entry},
		})
		switch {
		case err != nil:
		case len(out.Successful) == 1:
			return nil
		case len(out.Failed) == 1:
			err = fmt.Errorf("poison message refused: %s", aws.ToString(out.Failed[0].Code))
			if out.Failed[0].SenderFault {
				return err
			}
		default:
			err = fmt.Errorf("poison message not acknowledged")
		}
		if attempt >= h.attempts() || !h.pause(ctx, attempt) {
			return err
		}
	}
}

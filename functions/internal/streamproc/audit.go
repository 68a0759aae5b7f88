package streamproc

import (
	"context"
	"errors"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/events"
)

// MaxAuditItemsPerTransaction is TransactWriteItems' limit on actions.
const MaxAuditItemsPerTransaction = 100

// Why TransactWriteItems and not BatchWriteItem:
//
// The audit table is append-only: an item, once written, is never changed.
// Each put carries attribute_not_exists(eventKey), so a replayed record
// (a Lambda retry, or an operator re-driving a file with the replay command,
// even a wrong or edited file) writes nothing at all, and a second copy of
// (job, event type) is impossible whatever future code derives. BatchWriteItem
// cannot carry conditions: its idempotence would rest on every version of the
// processor deriving byte-identical items and it would silently rewrite
// history otherwise. TransactWriteItems carries up to 100 conditional puts
// per request, so it also batches better (0.01 requests per event rather
// than 0.04). Its costs: a transactional write uses twice the write
// capacity, and one failed condition cancels the whole transaction, so a
// replay takes a second request: the cancellation reasons name the items
// already present, which are dropped, and the rest are retried. Transient
// reasons (conflict, throttling) are retried with backoff, a bounded number
// of times.

// cancellation reason codes (CancellationReason.Code).
const (
	reasonNone        = "None"
	reasonCondition   = "ConditionalCheckFailed"
	reasonConflict    = "TransactionConflict"
	reasonThrottling  = "ThrottlingError"
	reasonProvisioned = "ProvisionedThroughputExceeded"
)

// writeAudit writes one audit item per event owed by a record before stop,
// up to 100 per TransactWriteItems. It returns how many items it wrote, how
// many were already present and the index of the first record with an item
// that could not be written (stop if none).
func (h *Handler) writeAudit(ctx context.Context, writes []auditWrite, stop int) (written, present, failed int) {
	failed = stop
	for start := 0; start < len(writes); start += MaxAuditItemsPerTransaction {
		chunk := writes[start:min(start+MaxAuditItemsPerTransaction, len(writes))]
		if chunk[0].rec >= failed {
			break
		}
		w, p, f := h.writeChunk(ctx, chunk, failed)
		written, present = written+w, present+p
		if f < failed {
			failed = f
			break
		}
	}
	return written, present, failed
}

type put struct {
	rec  int
	item types.TransactWriteItem
}

func (h *Handler) writeChunk(ctx context.Context, chunk []auditWrite, stop int) (written, present, failed int) {
	failed = stop
	cond := "attribute_not_exists(#k)"
	names := map[string]string{"#k": events.AttrEventKey}
	var pending []put
	for _, w := range chunk {
		if w.rec >= stop {
			continue
		}
		item, err := events.MarshalAuditItem(w.event)
		if err != nil { // cannot happen for a struct of strings and ints
			failed = min(failed, w.rec)
			continue
		}
		pending = append(pending, put{w.rec, types.TransactWriteItem{Put: &types.Put{
			TableName: &h.auditTable, Item: item, ConditionExpression: &cond, ExpressionAttributeNames: names,
		}}})
	}
	// attempt counts the tries that failed for a transient reason (or for
	// no stated reason); dropping items already present costs none, since
	// what remains has not been tried on its own yet.
	for attempt := 1; len(pending) > 0; {
		items := make([]types.TransactWriteItem, len(pending))
		for i, p := range pending {
			items[i] = p.item
		}
		_, err := h.audit.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil {
			written += len(pending)
			pending = nil
			break
		}
		var retry []put
		transient := true
		var canceled *types.TransactionCanceledException
		if errors.As(err, &canceled) && len(canceled.CancellationReasons) == len(pending) {
			transient = false
			for i, r := range canceled.CancellationReasons {
				switch code := aws.ToString(r.Code); code {
				case reasonCondition:
					present++
				case "", reasonNone:
					retry = append(retry, pending[i])
				case reasonConflict, reasonThrottling, reasonProvisioned:
					transient = true
					retry = append(retry, pending[i])
				default: // ValidationError and the like: the same put fails again
					h.log.WarnContext(ctx, "audit item rejected", slog.String("code", code),
						slog.String("type", pending[i].typ()), slog.Int("attempt", attempt))
					failed = min(failed, pending[i].rec)
				}
			}
			if len(retry) == len(pending) {
				transient = true // nothing dropped: trying again as is needs a pause
			}
		} else {
			h.log.WarnContext(ctx, "TransactWriteItems failed", slog.Int("items", len(pending)),
				slog.Int("attempt", attempt), slog.String("code", errorCode(err)))
			retry = pending
		}
		pending = retry
		if len(pending) == 0 || ctx.Err() != nil {
			break
		}
		if transient {
			if attempt >= h.attempts() || !h.pause(ctx, attempt) {
				break
			}
			attempt++
		}
	}
	for _, p := range pending {
		failed = min(failed, p.rec)
	}
	return written, present, failed
}

func (p put) typ() string {
	if v, ok := p.item.Put.Item[events.AttrType].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

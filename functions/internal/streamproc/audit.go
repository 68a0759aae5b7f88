package streamproc

import (
	"context"
	"errors"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/schema"
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

// auditResult accumulates what writing one chunk did.
type auditResult struct {
	written, present int
	failed           int // lowest record index with an item not written
}

func (r *auditResult) fail(rec int) { r.failed = min(r.failed, rec) }

func (h *Handler) writeChunk(ctx context.Context, chunk []auditWrite, stop int) (written, present, failed int) {
	res := auditResult{failed: stop}
	cond := "attribute_not_exists(#k)"
	names := map[string]string{"#k": schema.AttrEventKey}
	var puts []put
	for _, w := range chunk {
		if w.rec >= stop {
			continue
		}
		item, err := schema.MarshalAuditItem(w.event)
		if err != nil { // cannot happen for a struct of strings and ints
			res.fail(w.rec)
			continue
		}
		puts = append(puts, put{w.rec, types.TransactWriteItem{Put: &types.Put{
			TableName: &h.opts.AuditTable, Item: item, ConditionExpression: &cond, ExpressionAttributeNames: names,
		}}})
	}
	h.transact(ctx, puts, 1, &res)
	return res.written, res.present, res.failed
}

// transact writes puts as one transaction, retrying what a cancellation
// leaves: items already present are dropped (they are done), items that
// would have succeeded are retried at once as a transaction of their own
// (so that one throttled or conflicting item does not hold back the
// others), and items that failed for a transient reason are retried after
// a pause, up to MaxAttempts tries in all.
func (h *Handler) transact(ctx context.Context, puts []put, attempt int, res *auditResult) {
	for len(puts) > 0 {
		items := make([]types.TransactWriteItem, len(puts))
		for i, p := range puts {
			items[i] = p.item
		}
		_, err := h.opts.Audit.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil {
			res.written += len(puts)
			return
		}
		var canceled *types.TransactionCanceledException
		if errors.As(err, &canceled) && len(canceled.CancellationReasons) == len(puts) {
			var clean, hot []put
			for i, r := range canceled.CancellationReasons {
				switch code := aws.ToString(r.Code); code {
				case reasonCondition:
					res.present++
				case "", reasonNone:
					clean = append(clean, puts[i])
				case reasonConflict, reasonThrottling, reasonProvisioned:
					hot = append(hot, puts[i])
				default: // ValidationError and the like: the same put fails again
					h.log.WarnContext(ctx, "audit item rejected", slog.String("code", code),
						slog.String("type", puts[i].typ()), slog.Int("attempt", attempt))
					res.fail(puts[i].rec)
				}
			}
			switch {
			case len(clean) == len(puts):
				// Cancelled with no reason given: retry all after a pause.
			case len(clean) > 0:
				// Not tried on their own yet: costs no attempt and no pause.
				h.transact(ctx, clean, attempt, res)
				puts = hot
			default:
				puts = hot
			}
			if len(hot) > 0 {
				h.log.WarnContext(ctx, "audit items throttled or conflicting", slog.Int("items", len(hot)),
					slog.Int("attempt", attempt))
			}
		} else {
			h.log.WarnContext(ctx, "TransactWriteItems failed", slog.Int("items", len(puts)),
				slog.Int("attempt", attempt), slog.String("code", errorCode(err)))
		}
		if len(puts) == 0 {
			return
		}
		if attempt >= h.attempts() || !h.pause(ctx, attempt) {
			for _, p := range puts {
				res.fail(p.rec)
			}
			return
		}
		attempt++
	}
}

func (p put) typ() string {
	if v, ok := p.item.Put.Item[schema.AttrType].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

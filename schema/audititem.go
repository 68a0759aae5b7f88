package schema

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
)

// AuditItem is one row of the audit table: a user-facing record of a trace
// outcome. It holds no lease ID of an analysis lease, no stack trace and no
// unsanitized text.
//
// The sort key is "<jobId>#<eventType>": exactly one item per job and event
// type, so the conditional put (attribute_not_exists) that writes it makes
// the table itself reject a second copy, whatever a replay or a future
// change to how event times are derived does. The timeline is the
// HistoryIndex, sorted by HistoryKey: derived from the item alone, so a
// replay writes the same value (and is refused by the key anyway).
type AuditItem struct {
	MovieID    string `dynamodbav:"movieId"`
	EventKey   string `dynamodbav:"eventKey"`
	Type       string `dynamodbav:"type"`
	JobID      string `dynamodbav:"jobId"`
	UserID     string `dynamodbav:"userId"`
	UserName   string `dynamodbav:"userName"`
	OccurredAt string `dynamodbav:"occurredAt"`
	// HistoryKey is the HistoryIndex sort key: Position().IndexKey(). It
	// names no job (only a digest of EventKey).
	HistoryKey string `dynamodbav:"historyKey"`
	FromFrame  int    `dynamodbav:"fromFrame"`
	Version    int64  `dynamodbav:"version"`
	// Summary is set for failed and abandoned jobs only, sanitized again
	// (domain.SanitizeSummary) whatever the row held.
	Summary string `dynamodbav:"summary,omitempty"`
	// Settings and traced range (see events.Event); absent in items written before
	// they were recorded.
	TrimStart       int `dynamodbav:"trimStart,omitempty"`
	TrimEnd         int `dynamodbav:"trimEnd,omitempty"`
	CaptureInterval int `dynamodbav:"captureInterval,omitempty"`
	Frames          int `dynamodbav:"frames,omitempty"`
	FirstFrame      int `dynamodbav:"firstFrame,omitempty"`
	LastFrame       int `dynamodbav:"lastFrame,omitempty"`
	// Calibration describes a calibration set (movie.calibration.set).
	Calibration string `dynamodbav:"calibration,omitempty"`
}

// NewAuditItem returns the audit item of an event. It is a pure function of
// the event, so a replayed record yields the same item.
func NewAuditItem(e events.Event) AuditItem {
	it := AuditItem{
		MovieID: e.MovieID, EventKey: e.AuditKey(), Type: string(e.Type), JobID: e.JobID,
		UserID: e.UserID, UserName: e.UserName, OccurredAt: events.FormatTime(e.At),
		FromFrame: e.FromFrame, Version: e.Version,
		TrimStart: e.TrimStart, TrimEnd: e.TrimEnd, CaptureInterval: e.CaptureInterval,
		Frames: e.Frames, FirstFrame: e.FirstFrame, LastFrame: e.LastFrame, Calibration: e.Calibration,
	}
	it.HistoryKey = it.Position().IndexKey()
	if e.Type == events.TracingFailed || e.Type == events.TracingAbandoned {
		it.Summary = domain.SanitizeSummary(e.Summary)
	}
	return it
}

// MarshalAuditItem encodes an event's audit item as a DynamoDB item.
func MarshalAuditItem(e events.Event) (map[string]types.AttributeValue, error) {
	item, err := attributevalue.MarshalMap(NewAuditItem(e))
	if err != nil {
		return nil, fmt.Errorf("encode audit item: %w", err)
	}
	return item, nil
}

// UnmarshalAuditItem decodes an audit item (for readers and tests).
func UnmarshalAuditItem(item map[string]types.AttributeValue) (AuditItem, error) {
	var it AuditItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return AuditItem{}, fmt.Errorf("decode audit item: %w", err)
	}
	return it, nil
}

// Time parses OccurredAt.
func (it AuditItem) Time() (time.Time, error) { return time.Parse(events.TimeLayout, it.OccurredAt) }

// Position is the item's place in its movie's history.
func (it AuditItem) Position() events.HistoryPosition {
	return events.NewHistoryPosition(it.OccurredAt, it.EventKey)
}

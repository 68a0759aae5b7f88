package dynamo

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/schema"
)

// AuditAPI is the part of the DynamoDB client the audit reader uses.
type AuditAPI interface {
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// MaxHistoryItems bounds how many audit items of one movie a history read
// considers (two to three per trace).
const MaxHistoryItems = 20_000

// AuditReader reads a movie's audit items (written by the stream processor)
// for its history, newest first.
type AuditReader struct {
	client AuditAPI
	table  string
}

// NewAuditReader returns a reader of the named audit table.
func NewAuditReader(client AuditAPI, table string) *AuditReader {
	return &AuditReader{client: client, table: table}
}

// History returns at most limit audit items of the movie, newest first,
// strictly after the position after (nil: from the newest), and the
// position to continue from (nil on the last page).
//
// The table's sort key is "<jobId>#<type>", which does not order by time,
// so a page Queries the movie's whole partition (at most MaxHistoryItems
// items, a few per trace) and sorts it; a time-ordered index would make a
// page one bounded Query.
func (r *AuditReader) History(ctx context.Context, movieID string, after *events.HistoryPosition, limit int) ([]schema.AuditItem, *events.HistoryPosition, error) {
	if !domain.ValidMovieID(movieID) {
		return nil, nil, domain.Invalid("movieId", "malformed movie ID")
	}
	if limit < 1 {
		return nil, nil, domain.Invalid("limit", "must be positive")
	}
	in := &dynamodb.QueryInput{
		TableName:                &r.table,
		KeyConditionExpression:   aws.String("#m = :m"),
		ExpressionAttributeNames: map[string]string{"#m": schema.AttrMovieID},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":m": &types.AttributeValueMemberS{Value: movieID},
		},
	}
	type entry struct {
		item schema.AuditItem
		pos  events.HistoryPosition
	}
	var all []entry
	p := dynamodb.NewQueryPaginator(r.client, in)
	for p.HasMorePages() && len(all) < MaxHistoryItems {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("query audit: %w", err)
		}
		for _, raw := range page.Items {
			it, err := schema.UnmarshalAuditItem(raw)
			if err != nil {
				return nil, nil, err
			}
			all = append(all, entry{it, it.Position()})
		}
	}
	slices.SortFunc(all, func(a, b entry) int { return events.CompareNewestFirst(a.pos, b.pos) })
	start := 0
	if after != nil {
		start, _ = slices.BinarySearchFunc(all, *after, func(e entry, t events.HistoryPosition) int { return events.CompareNewestFirst(e.pos, t) })
		if start < len(all) && all[start].pos == *after {
			start++
		}
	}
	end := min(start+limit, len(all))
	out := make([]schema.AuditItem, 0, end-start)
	for _, e := range all[start:end] {
		out = append(out, e.item)
	}
	var next *events.HistoryPosition
	if end < len(all) && end > start {
		n := all[end-1].pos
		next = &n
	}
	return out, next, nil
}

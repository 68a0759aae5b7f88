package dynamo

import (
	"context"
	"fmt"

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

// MaxHistoryPage bounds one page of History (the API allows 100).
const MaxHistoryPage = 1000

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
// A page is one Query of the HistoryIndex, descending, reading at most
// limit+1 items: the extra one only tells whether a next page exists, so
// the last page never promises more. The position returned is the index
// key of the page's last item (what LastEvaluatedKey would hold for a Query
// of limit items, less the base table's key, whose eventKey names the job);
// the next page starts with historyKey < it.
func (r *AuditReader) History(ctx context.Context, movieID string, after *events.HistoryPosition, limit int) ([]schema.AuditItem, *events.HistoryPosition, error) {
	if !domain.ValidMovieID(movieID) {
		return nil, nil, domain.Invalid("movieId", "malformed movie ID")
	}
	if limit < 1 || limit > MaxHistoryPage {
		return nil, nil, domain.Invalid("limit", "must be 1-%d", MaxHistoryPage)
	}
	cond := "#m = :m"
	values := map[string]types.AttributeValue{":m": &types.AttributeValueMemberS{Value: movieID}}
	names := map[string]string{"#m": schema.AttrMovieID}
	if after != nil {
		if _, err := events.ParseIndexKey(after.IndexKey()); err != nil {
			return nil, nil, domain.Invalid("cursor", "malformed history position")
		}
		cond += " AND #h < :h"
		names["#h"] = schema.AttrHistoryKey
		values[":h"] = &types.AttributeValueMemberS{Value: after.IndexKey()}
	}
	out, err := r.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 &r.table,
		IndexName:                 aws.String(schema.HistoryIndex),
		KeyConditionExpression:    &cond,
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(int32(limit + 1)),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("query audit history: %w", err)
	}
	items := make([]schema.AuditItem, 0, min(len(out.Items), limit))
	for _, raw := range out.Items[:min(len(out.Items), limit)] {
		it, err := schema.UnmarshalAuditItem(raw)
		if err != nil {
			return nil, nil, err
		}
		items = append(items, it)
	}
	if len(out.Items) <= limit {
		return items, nil, nil
	}
	next, err := events.ParseIndexKey(items[len(items)-1].HistoryKey)
	if err != nil {
		return nil, nil, fmt.Errorf("audit item %s: history key: %w", items[len(items)-1].MovieID, err)
	}
	return items, &next, nil
}

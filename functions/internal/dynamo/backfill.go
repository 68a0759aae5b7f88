package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/schema"
)

// BackfillAPI is the part of the DynamoDB client BackfillHistoryKeys uses.
type BackfillAPI interface {
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// Backfill counts what BackfillHistoryKeys found and did.
type Backfill struct {
	Missing int `json:"missing"` // items without a historyKey
	Updated int `json:"updated"` // of those, set now (the others were set meanwhile)
}

// BackfillHistoryKeys sets historyKey on the audit items written before the
// history index existed (which are not in the index, so not in any history
// page). The key is derived from the item alone, as the stream processor
// derives it (schema.AuditItem.Position), and each update is conditioned on
// the item existing without one: running it again, or alongside the stream
// processor, changes nothing already set. dryRun only counts. It reads the
// whole table once (a Scan filtered to the items missing the key).
func BackfillHistoryKeys(ctx context.Context, client BackfillAPI, table string, dryRun bool) (Backfill, error) {
	var out Backfill
	in := &dynamodb.ScanInput{
		TableName:                &table,
		FilterExpression:         aws.String("attribute_not_exists(#h)"),
		ProjectionExpression:     aws.String("#m, #k, #t"),
		ExpressionAttributeNames: map[string]string{"#h": schema.AttrHistoryKey, "#m": schema.AttrMovieID, "#k": schema.AttrEventKey, "#t": schema.AttrOccurredAt},
	}
	p := dynamodb.NewScanPaginator(client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return out, fmt.Errorf("scan audit: %w", err)
		}
		for _, raw := range page.Items {
			var it schema.AuditItem
			if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
				return out, fmt.Errorf("decode audit item: %w", err)
			}
			pos := it.Position()
			if _, err := events.ParseIndexKey(pos.IndexKey()); err != nil || it.MovieID == "" || it.EventKey == "" {
				return out, fmt.Errorf("audit item of movie %q: no usable time (%q) or key", it.MovieID, it.OccurredAt)
			}
			out.Missing++
			if dryRun {
				continue
			}
			_, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName: &table,
				Key: map[string]types.AttributeValue{
					schema.AttrMovieID:  &types.AttributeValueMemberS{Value: it.MovieID},
					schema.AttrEventKey: &types.AttributeValueMemberS{Value: it.EventKey},
				},
				UpdateExpression:         aws.String("SET #h = :h"),
				ConditionExpression:      aws.String("attribute_exists(#k) AND attribute_not_exists(#h)"),
				ExpressionAttributeNames: map[string]string{"#h": schema.AttrHistoryKey, "#k": schema.AttrEventKey},
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":h": &types.AttributeValueMemberS{Value: pos.IndexKey()},
				},
			})
			var failed *types.ConditionalCheckFailedException
			switch {
			case errors.As(err, &failed):
			case err != nil:
				return out, fmt.Errorf("set the history key of an audit item of movie %q: %w", it.MovieID, err)
			default:
				out.Updated++
			}
		}
	}
	return out, nil
}

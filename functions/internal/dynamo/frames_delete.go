package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/schema"
)

// batchWriter is the BatchWriteItem of the DynamoDB client.
type batchWriter interface {
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

// DeleteAll deletes every traced frame of a movie (after the movie itself
// was deleted, so no job can be writing them: job writes are fenced on the
// movie row) and returns how many it deleted.
func (s *FrameStore) DeleteAll(ctx context.Context, movieID string) (int, error) {
	client, ok := s.client.(batchWriter)
	if !ok {
		return 0, fmt.Errorf("dynamo: this client cannot batch-delete frames")
	}
	keys, err := s.Keys(ctx, movieID, 0)
	if err != nil {
		return 0, err
	}
	for start := 0; start < len(keys); start += 25 {
		end := min(start+25, len(keys))
		reqs := make([]types.WriteRequest, 0, end-start)
		for _, f := range keys[start:end] {
			reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: schema.FrameKey(movieID, f)}})
		}
		pending := map[string][]types.WriteRequest{s.table: reqs}
		for len(pending) > 0 {
			out, err := client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return start, fmt.Errorf("delete frames of %s: %w", movieID, err)
			}
			pending = out.UnprocessedItems
		}
	}
	return len(keys), nil
}

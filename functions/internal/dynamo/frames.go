package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/retry"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/schema"
)

// FrameAPI is the part of the DynamoDB client the frame store uses.
type FrameAPI interface {
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// MaxFencedWrites is the most frame puts and deletes one WriteFenced takes:
// a TransactWriteItems holds at most 100 actions, and one is the fence.
const MaxFencedWrites = 99

// MaxFramePage is the most frames one Page returns.
const MaxFramePage = 1000

// FrameStore keeps traced frames in the frames table, keyed by (movieId,
// frame). It writes only through WriteFenced: every frame write is a
// transaction guarded by the movie row's job fence.
type FrameStore struct {
	client FrameAPI
	table  string
}

// NewFrameStore returns a store on the named table.
func NewFrameStore(client FrameAPI, table string) *FrameStore {
	return &FrameStore{client: client, table: table}
}

// query is a consistent Query of the movie's frames at or after from.
func (s *FrameStore) query(movieID string, from int) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName:                &s.table,
		KeyConditionExpression:   aws.String("#m = :m AND #f >= :from"),
		ExpressionAttributeNames: map[string]string{"#m": schema.AttrMovieID, "#f": schema.AttrFrameIndex},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":m":    &types.AttributeValueMemberS{Value: movieID},
			":from": &types.AttributeValueMemberN{Value: strconv.Itoa(from)},
		},
		ConsistentRead: aws.Bool(true),
	}
}

func checkRange(movieID string, from int) error {
	if !domain.ValidMovieID(movieID) {
		return domain.Invalid("movieId", "malformed movie ID")
	}
	if from < 0 {
		return domain.Invalid("from", "must not be negative")
	}
	return nil
}

// Keys returns the indices of every stored frame of the movie at or after
// from, in ascending order. It is a strongly consistent Query that projects
// only the key, so it sees every frame written before it was called (a
// worker calls it after its claim, when no earlier job can write any more).
func (s *FrameStore) Keys(ctx context.Context, movieID string, from int) ([]int, error) {
	if err := checkRange(movieID, from); err != nil {
		return nil, err
	}
	in := s.query(movieID, from)
	in.ProjectionExpression = aws.String("#f")
	var keys []int
	p := dynamodb.NewQueryPaginator(s.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("query frame keys of %s: %w", movieID, err)
		}
		for _, item := range page.Items {
			n, err := schema.FrameIndexOf(item)
			if err != nil {
				return nil, err
			}
			keys = append(keys, n)
		}
	}
	return keys, nil
}

// Page returns up to limit (1-MaxFramePage) stored frames of the movie at or
// after from, in frame order, and the index to pass as from for the next
// page, or nil when there are no more frames. The read is strongly
// consistent, so a reader that saw a movie traced sees all of its frames.
//
// A page may hold fewer than limit frames while next is not nil (DynamoDB
// returns at most 1 MB per Query); only a nil next means "no more".
func (s *FrameStore) Page(ctx context.Context, movieID string, from, limit int) ([]domain.Frame, *int, error) {
	if err := checkRange(movieID, from); err != nil {
		return nil, nil, err
	}
	if limit < 1 || limit > MaxFramePage {
		return nil, nil, domain.Invalid("limit", "must be 1-%d", MaxFramePage)
	}
	in := s.query(movieID, from)
	// One more than asked, so that "exactly limit frames left" ends with
	// next == nil instead of an empty last page.
	in.Limit = aws.Int32(int32(limit + 1))
	out, err := s.client.Query(ctx, in)
	if err != nil {
		return nil, nil, fmt.Errorf("query frames of %s: %w", movieID, err)
	}
	frames := make([]domain.Frame, 0, min(len(out.Items), limit))
	for _, item := range out.Items {
		it, err := schema.UnmarshalFrame(item)
		if err != nil {
			return nil, nil, err
		}
		frames = append(frames, it.Frame())
	}
	switch {
	case len(frames) > limit:
		next := frames[limit].Index
		return frames[:limit], &next, nil
	case len(out.LastEvaluatedKey) > 0 && len(frames) > 0:
		// Cut short by the 1 MB page size.
		next := frames[len(frames)-1].Index + 1
		return frames, &next, nil
	case len(out.LastEvaluatedKey) > 0:
		// No item fitted in 1 MB: impossible with 400 KB items, but resume
		// from the key DynamoDB returned rather than loop.
		n, err := schema.FrameIndexOf(out.LastEvaluatedKey)
		if err != nil {
			return nil, nil, err
		}
		next := n + 1
		return frames, &next, nil
	}
	return frames, nil, nil
}

// WriteFenced puts and deletes frames of the movie in one TransactWriteItems
// whose first action is fence (MovieStore.FenceCheck): either the movie row
// still carries the writer's claimed live lease and every write lands, or
// nothing does. At most MaxFencedWrites puts and deletes together, no frame
// twice (a transaction may not touch one item twice), every put valid.
//
// A refused fence comes back as TransactionCanceledException: pass the error
// to FenceRefusal for the domain's refusal, and check IsTransactionConflict
// for a conflict with a concurrent write, which wrote nothing and may be
// retried. The SDK fills in a ClientRequestToken and retries transport
// failures with it, so a retried transaction is applied at most once.
// The retries are the store's own (retry.Default on retryableWrite, with
// one ClientRequestToken), not the SDK's, whose quota may be drained.
func (s *FrameStore) WriteFenced(ctx context.Context, movieID string, fence types.TransactWriteItem, puts []domain.Frame, deletes []int) error {
	if !domain.ValidMovieID(movieID) {
		return domain.Invalid("movieId", "malformed movie ID")
	}
	if fence.ConditionCheck == nil || fence.Put != nil || fence.Update != nil || fence.Delete != nil {
		return errors.New("dynamo: WriteFenced needs a ConditionCheck fence (MovieStore.FenceCheck)")
	}
	n := len(puts) + len(deletes)
	if n == 0 || n > MaxFencedWrites {
		return fmt.Errorf("dynamo: WriteFenced takes 1-%d frame writes, got %d", MaxFencedWrites, n)
	}
	items := make([]types.TransactWriteItem, 0, n+1)
	items = append(items, fence)
	seen := make(map[int]bool, n)
	for _, f := range puts {
		if err := f.Validate(); err != nil {
			return err
		}
		if seen[f.Index] {
			return fmt.Errorf("dynamo: WriteFenced got frame %d twice", f.Index)
		}
		seen[f.Index] = true
		item, err := schema.MarshalFrame(movieID, f)
		if err != nil {
			return err
		}
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: item}})
	}
	for _, i := range deletes {
		if i < 0 {
			return domain.Invalid("frame", "must not be negative")
		}
		if seen[i] {
			return fmt.Errorf("dynamo: WriteFenced got frame %d twice", i)
		}
		seen[i] = true
		items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: &s.table, Key: schema.FrameKey(movieID, i)}})
	}
	// A lost answer is retried here, not by the SDK (lostanswer.go): one
	// SDK attempt per send, the store's bounded retries, all with one
	// ClientRequestToken, so a transaction that did commit is answered as
	// committed by DynamoDB and applied once.
	in := &dynamodb.TransactWriteItemsInput{TransactItems: items, ClientRequestToken: aws.String(token.New())}
	err := retry.Default.Do(ctx, retryableWrite, func() error {
		_, err := s.client.TransactWriteItems(ctx, in, sdkOnce)
		return err
	})
	if err != nil {
		return fmt.Errorf("fenced write of %d frames of %s: %w", n, movieID, err)
	}
	return nil
}

// IsTransactionConflict reports whether err is DynamoDB refusing a write
// because a concurrent transaction or write touched the same item: a
// transaction cancelled with a TransactionConflict reason, or a single-item
// write refused with TransactionConflictException. Nothing was written, the
// fence (if any) did not fail, and the write may be retried. DynamoDB Local
// never reports it; the service does.
func IsTransactionConflict(err error) bool {
	var conflict *types.TransactionConflictException
	if errors.As(err, &conflict) {
		return true
	}
	var tc *types.TransactionCanceledException
	if !errors.As(err, &tc) {
		return false
	}
	conflicted := false
	for _, r := range tc.CancellationReasons {
		switch aws.ToString(r.Code) {
		case "TransactionConflict":
			conflicted = true
		case "", "None":
		default:
			// A failed condition or a validation error decides the outcome:
			// retrying would not change it.
			return false
		}
	}
	return conflicted
}

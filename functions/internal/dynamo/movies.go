// Package dynamo adapts the domain to DynamoDB: the movie store (one
// conditional write per transition), the frames store and the table schemas.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/retry"
	"github.com/movietrace/tracinglocks/schema"
)

// MovieAPI is the part of the DynamoDB client the movie store uses.
type MovieAPI interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// MovieStore keeps movies in one table, keyed by movieId.
type MovieStore struct {
	client MovieAPI
	table  string
	retry  retry.Policy
}

// Option configures a MovieStore.
type Option func(*MovieStore)

// WithConflictRetry sets how the store retries a write that failed for a
// passing reason: refused with TransactionConflictException (it collided
// with a transaction on the same row, e.g. a worker's fenced frame write,
// and wrote nothing), or whose answer was lost (see lostanswer.go; the
// retry's refusal is then recognised as the success it was). The default is
// retry.Default: 5 tries with jittered, capped backoff.
func WithConflictRetry(p retry.Policy) Option { return func(s *MovieStore) { s.retry = p } }

// NewMovieStore returns a store on the named table.
func NewMovieStore(client MovieAPI, table string, opts ...Option) *MovieStore {
	s := &MovieStore{client: client, table: table, retry: retry.Default}
	for _, o := range opts {
		o(s)
	}
	return s
}

// ErrDisagreement means DynamoDB refused a write whose precondition the
// domain accepts on the very item DynamoDB evaluated: the condition
// expression and the domain rule have drifted apart. It is a bug, never a
// user error; the differential test exists to keep it from happening.
var ErrDisagreement = errors.New("dynamo: condition expression disagrees with the domain")

func (s *MovieStore) key(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{schema.AttrMovieID: &types.AttributeValueMemberS{Value: id}}
}

// Get reads a movie with a strongly consistent read.
func (s *MovieStore) Get(ctx context.Context, id string) (domain.Movie, error) {
	if !domain.ValidMovieID(id) {
		return domain.Movie{}, domain.Invalid("movieId", "malformed movie ID")
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.table, Key: s.key(id), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return domain.Movie{}, fmt.Errorf("get movie %s: %w", id, err)
	}
	if len(out.Item) == 0 {
		return domain.Movie{}, &domain.Error{Code: domain.CodeNotFound, Message: "movie not found"}
	}
	return schema.UnmarshalMovie(out.Item)
}

// List returns every movie. The catalogue is small (one row per movie) so a
// paginated Scan is the honest tool; a catalogue of thousands would add a
// sparse GSI instead. A row that cannot be read as a movie is left out of
// movies and returned in malformed instead, so that one bad row does not
// hide the others; err is for the scan itself.
func (s *MovieStore) List(ctx context.Context) (movies []domain.Movie, malformed []*schema.MalformedMovieError, err error) {
	p := dynamodb.NewScanPaginator(s.client, &dynamodb.ScanInput{TableName: &s.table})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("list movies: %w", err)
		}
		for _, item := range page.Items {
			m, err := schema.UnmarshalMovie(item)
			var bad *schema.MalformedMovieError
			switch {
			case errors.As(err, &bad):
				malformed = append(malformed, bad)
			case err != nil:
				return nil, nil, err
			default:
				movies = append(movies, m)
			}
		}
	}
	return movies, malformed, nil
}

// Create stores a new movie; it refuses to overwrite an existing one
// (CodeExists). A put whose answer was lost is sent again by the store
// (lostanswer.go); when the row that refuses it is this very creation
// (created, a movie awaiting its upload: domain.CreateMovie.Replays;
// otherwise the same row but for its timestamp) it is the success it was.
func (s *MovieStore) Create(ctx context.Context, m domain.Movie) error {
	item, err := schema.MarshalMovie(m)
	if err != nil {
		return err
	}
	cond, err := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name(schema.AttrMovieID))).Build()
	if err != nil {
		return err
	}
	in := &dynamodb.PutItemInput{
		TableName: &s.table, Item: item,
		ConditionExpression: cond.Condition(), ExpressionAttributeNames: cond.Names(), ExpressionAttributeValues: cond.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	err = s.retry.Do(ctx, retryableWrite, func() error {
		_, err := s.client.PutItem(ctx, in, sdkOnce)
		return err
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if old, err := schema.UnmarshalMovie(ccf.Item); err == nil && sameCreation(old, m) {
			return nil
		}
		return &domain.Error{Code: domain.CodeExists, Field: "id", Message: "a movie with this ID exists"}
	}
	if err != nil {
		return fmt.Errorf("create movie %s: %w", m.ID, err)
	}
	return nil
}

// Commit commits one command as one conditional UpdateItem and returns the
// movie as written: the condition is domain.Condition(cmd) and the update
// cmd.Update(), both translated (conditions.go). On refusal it rebuilds the
// domain's typed refusal from the item DynamoDB evaluated
// (ReturnValuesOnConditionCheckFailure ALL_OLD), so a refusal costs no second
// read; and when that item shows the command already took effect
// (domain.Replayed: the SDK retried a write whose first attempt committed but
// whose answer was lost, or an edit asked for what is already stored) it is
// the success it would have been, answered with that item. When that item
// names a successor (domain.Next: an opener over a stale tracing lease), the
// successor is committed instead. A write that
// collided with a transaction (TransactionConflictException) wrote nothing
// and is retried, and so is a write whose answer was lost: by the store, not
// by the SDK (lostanswer.go, WithConflictRetry).
func (s *MovieStore) Commit(ctx context.Context, movieID string, cmd domain.Command) (domain.Movie, error) {
	if err := cmd.Validate(); err != nil {
		return domain.Movie{}, err
	}
	if !domain.ValidMovieID(movieID) {
		return domain.Movie{}, domain.Invalid("movieId", "malformed movie ID")
	}
	// A refusal whose row names a successor (domain.Next: an opener over a
	// stale tracing lease takes it over) commits the successor instead, a
	// second request. If that one is refused in turn (the row changed in
	// between), cmd is decided again on the newer row: the answer is only
	// ever cmd's own refusal on a row DynamoDB evaluated, or a write. Each
	// round needs a change by someone else in between; after maxRounds the
	// caller gets a conflict (nothing written by this call, retry).
	try, successor := cmd, false
	for round := 1; ; round++ {
		m, old, err := s.commitOnce(ctx, movieID, try)
		if err != nil || old == nil {
			return m, err
		}
		if m, ok := replayed(old, try); ok {
			return m, nil
		}
		if len(old) == 0 {
			return domain.Movie{}, refusal(old, cmd)
		}
		row, err := schema.UnmarshalMovie(old)
		if err != nil {
			return domain.Movie{}, err
		}
		next, hasNext := domain.Next(cmd, &row)
		if !hasNext && (!successor || domain.Decide(cmd, &row) != nil) {
			// cmd's own refusal on this row (or, for cmd itself refused
			// where the domain accepts it, ErrDisagreement).
			return domain.Movie{}, refusal(old, cmd)
		}
		if round >= maxRounds {
			return domain.Movie{}, fmt.Errorf("%T on movie %s: the row changed under each of %d attempts: %w", cmd, movieID, maxRounds, domain.ErrConflict)
		}
		try, successor = cmd, false
		if hasNext {
			try, successor = next, true
		}
	}
}

// maxRounds bounds Commit's attempts when a successor keeps being refused
// because the row keeps changing.
const maxRounds = 8

// commitOnce makes one conditional UpdateItem of cmd. On a refusal it
// returns the item DynamoDB evaluated (old; an empty, non-nil map when there
// was none) and no error.
func (s *MovieStore) commitOnce(ctx context.Context, movieID string, cmd domain.Command) (m domain.Movie, old map[string]types.AttributeValue, err error) {
	cond, err := condition(domain.Condition(cmd))
	if err != nil {
		return domain.Movie{}, nil, err
	}
	upd, err := update(cmd.Update())
	if err != nil {
		return domain.Movie{}, nil, err
	}
	expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(upd).Build()
	if err != nil {
		return domain.Movie{}, nil, fmt.Errorf("build expression for %T: %w", cmd, err)
	}
	in := &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: s.key(movieID),
		ConditionExpression: expr.Condition(), UpdateExpression: expr.Update(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	var out *dynamodb.UpdateItemOutput
	err = s.retry.Do(ctx, retryableWrite, func() error {
		var err error
		out, err = s.client.UpdateItem(ctx, in, sdkOnce)
		return err
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if ccf.Item == nil {
			return domain.Movie{}, map[string]types.AttributeValue{}, nil
		}
		return domain.Movie{}, ccf.Item, nil
	}
	if err != nil {
		return domain.Movie{}, nil, fmt.Errorf("%T on movie %s: %w", cmd, movieID, err)
	}
	m, err = schema.UnmarshalMovie(out.Attributes)
	return m, nil, err
}

// Release applies domain.Release and treats "nothing to release" as
// success: release is idempotent, and an old page's release never removes a
// lease that is not its own. It reports whether a lease was removed.
func (s *MovieStore) Release(ctx context.Context, movieID string, cmd domain.Release) (bool, error) {
	_, err := s.Commit(ctx, movieID, cmd)
	switch domain.ErrorCode(err) {
	case "":
		return err == nil, err
	case domain.CodeNotHeld, domain.CodeNotFound:
		return false, nil
	default:
		return false, err
	}
}

// replayed reports whether the item that refused cmd shows that cmd already
// took effect (domain.Replayed), and returns it as the answer.
func replayed(old map[string]types.AttributeValue, cmd domain.Command) (domain.Movie, bool) {
	if len(old) == 0 {
		return domain.Movie{}, false
	}
	m, err := schema.UnmarshalMovie(old)
	if err != nil || domain.Decide(cmd, &m) == nil || !domain.Replayed(cmd, &m) {
		return domain.Movie{}, false
	}
	return m, true
}

// refusal turns the item a failed condition was evaluated on into the
// domain's refusal for cmd.
func refusal(old map[string]types.AttributeValue, cmd domain.Guard) error {
	if len(old) == 0 {
		return &domain.Error{Code: domain.CodeNotFound, Message: "movie not found"}
	}
	m, err := schema.UnmarshalMovie(old)
	if err != nil {
		return err
	}
	if err := domain.Decide(cmd, &m); err != nil {
		return err
	}
	return fmt.Errorf("%w: %T refused by DynamoDB, accepted by the domain on version %d", ErrDisagreement, cmd, m.Version)
}

// FenceCheck is the ConditionCheck that fences a worker's transactional
// frame writes on its job's claimed live lease (domain.JobFence). Put it
// first in a TransactWriteItems so FenceRefusal can find its reason.
func (s *MovieStore) FenceCheck(movieID string, f domain.JobFence) (types.TransactWriteItem, error) {
	if err := f.Validate(); err != nil {
		return types.TransactWriteItem{}, err
	}
	cond, err := condition(domain.Condition(f))
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: &s.table, Key: s.key(movieID),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, nil
}

// FenceRefusal maps a TransactWriteItems error whose first item is a
// FenceCheck to the domain's refusal (the worker lost its lease), and returns
// any other error unchanged.
func FenceRefusal(err error, f domain.JobFence) error {
	var tc *types.TransactionCanceledException
	if !errors.As(err, &tc) || len(tc.CancellationReasons) == 0 {
		return err
	}
	r := tc.CancellationReasons[0]
	if aws.ToString(r.Code) != "ConditionalCheckFailed" {
		return err
	}
	return refusal(r.Item, f)
}

// sameCreation reports whether the stored row old is the creation of m
// (see Create).
func sameCreation(old, m domain.Movie) bool {
	if m.Upload != nil {
		return domain.CreateMovie{ID: m.ID, Title: m.Title, Upload: *m.Upload}.Replays(old)
	}
	old.UpdatedAt = m.UpdatedAt
	return old.Version == 1 && reflect.DeepEqual(schema.NewMovieItem(old), schema.NewMovieItem(m))
}

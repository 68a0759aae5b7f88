package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/schema"
)

// itemDeleter is the DeleteItem of the DynamoDB client (not part of
// MovieAPI, so existing doubles of it need not grow).
type itemDeleter interface {
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Delete deletes a movie's row as one conditional DeleteItem whose
// condition is domain.Condition(g) (domain.DeleteMovie: no live lease), and
// returns the row it deleted. A refusal is rebuilt from the item DynamoDB
// evaluated, as for Commit; a movie that does not exist is CodeNotFound.
func (s *MovieStore) Delete(ctx context.Context, movieID string, g domain.Guard) (domain.Movie, error) {
	if err := g.Validate(); err != nil {
		return domain.Movie{}, err
	}
	if !domain.ValidMovieID(movieID) {
		return domain.Movie{}, domain.Invalid("movieId", "malformed movie ID")
	}
	client, ok := s.client.(itemDeleter)
	if !ok {
		return domain.Movie{}, errors.New("dynamo: this client cannot delete items")
	}
	cond, err := condition(domain.Condition(g))
	if err != nil {
		return domain.Movie{}, err
	}
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return domain.Movie{}, fmt.Errorf("build expression for %T: %w", g, err)
	}
	out, err := client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &s.table, Key: s.key(movieID),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValues:                        types.ReturnValueAllOld,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return domain.Movie{}, refusal(ccf.Item, g)
	}
	if err != nil {
		return domain.Movie{}, fmt.Errorf("delete movie %s: %w", movieID, err)
	}
	return schema.UnmarshalMovie(out.Attributes)
}

package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/schema"
)

// Tables names the three tables of an environment.
type Tables struct {
	Movies string
	Frames string
	Audit  string
}

// Key attribute names are the item schema's (schema.AttrMovieID,
// schema.AttrFrameIndex, schema.AttrEventKey, and schema.AttrHistoryKey of
// the audit table's schema.HistoryIndex), which the CDK stack uses too.

// Schemas returns the CreateTable inputs for the tables, the same keys and
// stream settings the CDK stack declares. They are used by the local stack
// and the tests; production tables are created by CloudFormation.
func (t Tables) Schemas() []*dynamodb.CreateTableInput {
	s := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	hash := func(n string) types.KeySchemaElement {
		return types.KeySchemaElement{AttributeName: aws.String(n), KeyType: types.KeyTypeHash}
	}
	rng := func(n string) types.KeySchemaElement {
		return types.KeySchemaElement{AttributeName: aws.String(n), KeyType: types.KeyTypeRange}
	}
	return []*dynamodb.CreateTableInput{
		{
			TableName:            aws.String(t.Movies),
			AttributeDefinitions: []types.AttributeDefinition{s(schema.AttrMovieID)},
			KeySchema:            []types.KeySchemaElement{hash(schema.AttrMovieID)},
			BillingMode:          types.BillingModePayPerRequest,
			StreamSpecification: &types.StreamSpecification{
				StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages,
			},
		},
		{
			TableName: aws.String(t.Frames),
			AttributeDefinitions: []types.AttributeDefinition{s(schema.AttrMovieID),
				{AttributeName: aws.String(schema.AttrFrameIndex), AttributeType: types.ScalarAttributeTypeN}},
			KeySchema:   []types.KeySchemaElement{hash(schema.AttrMovieID), rng(schema.AttrFrameIndex)},
			BillingMode: types.BillingModePayPerRequest,
		},
		{
			TableName:            aws.String(t.Audit),
			AttributeDefinitions: []types.AttributeDefinition{s(schema.AttrMovieID), s(schema.AttrEventKey), s(schema.AttrHistoryKey)},
			KeySchema:            []types.KeySchemaElement{hash(schema.AttrMovieID), rng(schema.AttrEventKey)},
			BillingMode:          types.BillingModePayPerRequest,
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
				IndexName:  aws.String(schema.HistoryIndex),
				KeySchema:  []types.KeySchemaElement{hash(schema.AttrMovieID), rng(schema.AttrHistoryKey)},
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
			}},
		},
	}
}

// TableAPI is the part of the DynamoDB client CreateTables uses.
type TableAPI interface {
	CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// CreateTables creates the tables that do not exist yet and waits until
// they are active.
func CreateTables(ctx context.Context, client TableAPI, t Tables) error {
	for _, in := range t.Schemas() {
		_, err := client.CreateTable(ctx, in)
		var inUse *types.ResourceInUseException
		if err != nil && !errors.As(err, &inUse) {
			return fmt.Errorf("create table %s: %w", *in.TableName, err)
		}
		w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
			o.MinDelay = 50 * time.Millisecond
			o.MaxDelay = time.Second
		})
		if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName}, time.Minute); err != nil {
			return fmt.Errorf("wait for table %s: %w", *in.TableName, err)
		}
	}
	return nil
}

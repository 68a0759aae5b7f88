package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	"github.com/movietrace/tracinglocks/schema"
)

// addTables creates the movies table (with its NEW_AND_OLD_IMAGES stream),
// the frames table and the audit table (with its history index): on-demand, encrypted, with
// point-in-time recovery, deletion-protected when the environment retains.
func (s *Stack) addTables() {
	// No TTL anywhere: TTL deletes whole items, and a movie must stay.
	s.Movies = s.table("MoviesTable", nil, true)
	s.Frames = s.table("FramesTable", &awsdynamodb.Attribute{Name: jsii.String(schema.AttrFrameIndex), Type: awsdynamodb.AttributeType_NUMBER}, false)
	s.Audit = s.table("AuditTable", &awsdynamodb.Attribute{Name: jsii.String(schema.AttrEventKey), Type: awsdynamodb.AttributeType_STRING}, false)
	// The history's time order: a page is one descending Query of this
	// index. A global index (not a local one) so it can be added to a table
	// that exists; the item's primary key, which makes replays idempotent,
	// stays as it is. Items written before the index existed have no
	// historyKey and are not in it (docs/stream.md).
	s.Audit.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:      jsii.String(schema.HistoryIndex),
		PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String(schema.AttrMovieID), Type: awsdynamodb.AttributeType_STRING},
		SortKey:        &awsdynamodb.Attribute{Name: jsii.String(schema.AttrHistoryKey), Type: awsdynamodb.AttributeType_STRING},
		ProjectionType: awsdynamodb.ProjectionType_ALL,
	})
}

// table creates one table keyed by movieId (and sortKey when not nil). The
// attribute names are the item schema's, in package events.
func (s *Stack) table(id string, sortKey *awsdynamodb.Attribute, stream bool) awsdynamodb.Table {
	p := &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String(schema.AttrMovieID), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		Encryption:   awsdynamodb.TableEncryption_AWS_MANAGED,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		DeletionProtection: jsii.Bool(s.cfg.Retain()),
		RemovalPolicy:      s.removal,
		SortKey:            sortKey,
	}
	if stream {
		p.Stream = awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES
	}
	return awsdynamodb.NewTable(s.Stack, jsii.String(id), p)
}

package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	"github.com/movietrace/tracinglocks/schema"
)

// addTables creates the movies table (with its NEW_AND_OLD_IMAGES stream),
// the frames table and the audit table: on-demand, encrypted, with
// point-in-time recovery, deletion-protected when the environment retains.
func (s *Stack) addTables() {
	// No TTL anywhere: TTL deletes whole items, and a movie must stay.
	s.Movies = s.table("MoviesTable", nil, true)
	s.Frames = s.table("FramesTable", &awsdynamodb.Attribute{Name: jsii.String(schema.AttrFrameIndex), Type: awsdynamodb.AttributeType_NUMBER}, false)
	s.Audit = s.table("AuditTable", &awsdynamodb.Attribute{Name: jsii.String(schema.AttrEventKey), Type: awsdynamodb.AttributeType_STRING}, false)
}

// table creates one table keyed by movieId (and sortKey when not nil). The
// attribute names are the item schema's, in package schema.
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

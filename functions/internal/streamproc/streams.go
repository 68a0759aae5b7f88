package streamproc

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamstypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/movietrace/tracinglocks/schema"
)

// StreamsAPI is the part of the DynamoDB Streams client a stream reader
// uses (StreamReader here, the local stack's StreamPoller).
type StreamsAPI interface {
	DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(context.Context, *dynamodbstreams.GetShardIteratorInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(context.Context, *dynamodbstreams.GetRecordsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// DescribeTableAPI is what StreamARN needs.
type DescribeTableAPI interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// StreamARN returns the ARN of a table's current stream.
func StreamARN(ctx context.Context, client DescribeTableAPI, table string) (string, error) {
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return "", fmt.Errorf("describe table %s: %w", table, err)
	}
	if out.Table == nil || out.Table.LatestStreamArn == nil {
		return "", fmt.Errorf("table %s has no stream", table)
	}
	return *out.Table.LatestStreamArn, nil
}

// StreamReader reads a table's stream with the DynamoDB Streams API and
// returns the records as Lambda delivers them (schema.FromStreamsRecord).
// It is what tests and the local stack use in place of Lambda's event source
// mapping: each Read returns the records written since the previous one,
// every shard from TRIM_HORIZON, parents before children.
//
// Read treats an empty GetRecords response as "caught up", which holds for
// DynamoDB Local; on the real service an open shard can answer empty while
// records are still arriving, so it is a poller for local use, not a
// replacement for the event source mapping. A StreamReader is not safe for
// concurrent use.
type StreamReader struct {
	client StreamsAPI
	arn    string
	shards map[string]*shardState
	order  []string // shard IDs, parents first
}

type shardState struct {
	iterator *string // nil once the shard is closed and drained
	lastSeq  string  // the last record read, to resume after an expired iterator
	started  bool    // an iterator was obtained
}

// NewStreamReader returns a reader of the stream with the given ARN.
func NewStreamReader(client StreamsAPI, streamARN string) *StreamReader {
	return &StreamReader{client: client, arn: streamARN, shards: map[string]*shardState{}}
}

// maxPagesPerShard bounds one Read of one shard (1,000 records a page).
const maxPagesPerShard = 1000

// Read returns the records that arrived since the last Read.
func (r *StreamReader) Read(ctx context.Context) ([]events.DynamoDBEventRecord, error) {
	if err := r.discover(ctx); err != nil {
		return nil, err
	}
	var out []events.DynamoDBEventRecord
	for _, id := range r.order {
		recs, err := r.readShard(ctx, id)
		if err != nil {
			return out, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// ListShards returns every shard of a stream, following DescribeStream's
// pages. The local StreamReader and the local stack's StreamPoller both
// discover shards with it.
func ListShards(ctx context.Context, client StreamsAPI, streamARN string) ([]streamstypes.Shard, error) {
	var shards []streamstypes.Shard
	var start *string
	for {
		out, err := client.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &streamARN, ExclusiveStartShardId: start})
		if err != nil {
			return nil, fmt.Errorf("describe stream: %w", err)
		}
		if out.StreamDescription == nil {
			return nil, errors.New("describe stream: no description")
		}
		shards = append(shards, out.StreamDescription.Shards...)
		if start = out.StreamDescription.LastEvaluatedShardId; start == nil {
			return shards, nil
		}
	}
}

func (r *StreamReader) discover(ctx context.Context) error {
	shards, err := ListShards(ctx, r.client, r.arn)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, s := range shards {
		known[aws.ToString(s.ShardId)] = true
	}
	// Add new shards parents first: a shard whose parent is known but not
	// yet added waits for it.
	for added := true; added; {
		added = false
		for _, s := range shards {
			id := aws.ToString(s.ShardId)
			if _, ok := r.shards[id]; ok {
				continue
			}
			if p := aws.ToString(s.ParentShardId); p != "" && known[p] && r.shards[p] == nil {
				continue
			}
			r.shards[id] = &shardState{}
			r.order = append(r.order, id)
			added = true
		}
	}
	return nil
}

func (r *StreamReader) readShard(ctx context.Context, id string) ([]events.DynamoDBEventRecord, error) {
	st := r.shards[id]
	if !st.started {
		if err := r.resetIterator(ctx, id, st); err != nil {
			return nil, err
		}
	}
	var out []events.DynamoDBEventRecord
	for page := 0; page < maxPagesPerShard && st.iterator != nil; page++ {
		res, err := r.client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: st.iterator})
		var expired *streamstypes.ExpiredIteratorException
		if errors.As(err, &expired) {
			if err := r.resetIterator(ctx, id, st); err != nil {
				return out, err
			}
			continue
		}
		if err != nil {
			return out, fmt.Errorf("get records of shard %s: %w", id, err)
		}
		for _, rec := range res.Records {
			lr, err := schema.FromStreamsRecord(rec, r.arn)
			if err != nil {
				return out, err
			}
			out = append(out, lr)
			st.lastSeq = lr.Change.SequenceNumber
		}
		st.iterator = res.NextShardIterator
		if len(res.Records) == 0 {
			break
		}
	}
	return out, nil
}

// resetIterator starts a shard at TRIM_HORIZON, or after the last record
// read when an iterator expired (they live 15 minutes).
func (r *StreamReader) resetIterator(ctx context.Context, id string, st *shardState) error {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: &r.arn, ShardId: &id, ShardIteratorType: streamstypes.ShardIteratorTypeTrimHorizon}
	if st.lastSeq != "" {
		in.ShardIteratorType = streamstypes.ShardIteratorTypeAfterSequenceNumber
		in.SequenceNumber = &st.lastSeq
	}
	out, err := r.client.GetShardIterator(ctx, in)
	if err != nil {
		return fmt.Errorf("get iterator of shard %s: %w", id, err)
	}
	st.iterator, st.started = out.ShardIterator, true
	return nil
}

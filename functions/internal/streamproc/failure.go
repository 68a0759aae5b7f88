package streamproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamstypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/movietrace/tracinglocks/schema"
)

// FailureRecord is what the stream event source mapping sends to its
// on-failure destination (the stream failure queue) for a batch it gave up
// on: where the records are, not the records.
type FailureRecord struct {
	RequestContext struct {
		Condition string `json:"condition"`
	} `json:"requestContext"`
	BatchInfo BatchInfo `json:"DDBStreamBatchInfo"`
}

// BatchInfo locates a batch in the stream.
type BatchInfo struct {
	ShardID             string `json:"shardId"`
	StartSequenceNumber string `json:"startSequenceNumber"`
	EndSequenceNumber   string `json:"endSequenceNumber"`
	StreamArn           string `json:"streamArn"`
	BatchSize           int    `json:"batchSize"`
}

// DecodeFailure reads a failure record from b, which is the record itself
// (an SQS message body), or what `aws sqs receive-message` prints (its
// first message's Body).
func DecodeFailure(b []byte) (FailureRecord, error) {
	var received struct {
		Messages []struct {
			Body string `json:"Body"`
		} `json:"Messages"`
	}
	if json.Unmarshal(b, &received) == nil && len(received.Messages) > 0 {
		b = []byte(received.Messages[0].Body)
	}
	var f FailureRecord
	if err := json.Unmarshal(b, &f); err != nil {
		return FailureRecord{}, fmt.Errorf("not a stream failure record: %w", err)
	}
	bi := f.BatchInfo
	switch {
	case bi.ShardID == "" || bi.StreamArn == "":
		return FailureRecord{}, errors.New("not a stream failure record: no DDBStreamBatchInfo shardId / streamArn")
	case !decimal(bi.StartSequenceNumber) || !decimal(bi.EndSequenceNumber):
		return FailureRecord{}, errors.New("stream failure record: start and end sequence numbers must be decimal numbers")
	case seqLess(bi.EndSequenceNumber, bi.StartSequenceNumber):
		return FailureRecord{}, errors.New("stream failure record: the end sequence number is before the start")
	}
	return f, nil
}

func decimal(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// seqLess compares two decimal sequence numbers.
func seqLess(a, b string) bool {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// maxEmptyPages bounds the empty GetRecords pages ReadRange reads past
// while the range's end is not reached (an open shard of the service may
// answer empty pages before later records).
const maxEmptyPages = 50

// ReadRange reads the failure record's batch back from the stream: the
// shard's records from the start to the end sequence number, as Lambda
// delivers them. It fails when the start is no longer in the stream (the
// stream keeps records 24 hours).
func ReadRange(ctx context.Context, client StreamsAPI, f FailureRecord) ([]events.DynamoDBEventRecord, error) {
	bi := f.BatchInfo
	it, err := client.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
		StreamArn: &bi.StreamArn, ShardId: &bi.ShardID,
		ShardIteratorType: streamstypes.ShardIteratorTypeAtSequenceNumber, SequenceNumber: &bi.StartSequenceNumber,
	})
	var trimmed *streamstypes.TrimmedDataAccessException
	var missing *streamstypes.ResourceNotFoundException
	if errors.As(err, &trimmed) || errors.As(err, &missing) {
		return nil, fmt.Errorf("the batch is no longer in the stream (records are kept 24 hours): %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("get iterator at %s in shard %s: %w", bi.StartSequenceNumber, bi.ShardID, err)
	}
	var out []events.DynamoDBEventRecord
	iterator, empty := it.ShardIterator, 0
	for iterator != nil {
		res, err := client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iterator})
		if err != nil {
			return out, fmt.Errorf("get records of shard %s: %w", bi.ShardID, err)
		}
		for _, rec := range res.Records {
			lr, err := schema.FromStreamsRecord(rec, bi.StreamArn)
			if err != nil {
				return out, err
			}
			seq := lr.Change.SequenceNumber
			if seqLess(bi.EndSequenceNumber, seq) {
				return out, nil
			}
			if !seqLess(seq, bi.StartSequenceNumber) {
				out = append(out, lr)
			}
			if seq == bi.EndSequenceNumber {
				return out, nil
			}
		}
		if len(res.Records) == 0 {
			if empty++; empty > maxEmptyPages {
				break
			}
		}
		iterator = res.NextShardIterator
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no records between %s and %s in shard %s", bi.StartSequenceNumber, bi.EndSequenceNumber, bi.ShardID)
	}
	return out, fmt.Errorf("the shard ended before sequence number %s: read %d of the batch's records", bi.EndSequenceNumber, len(out))
}

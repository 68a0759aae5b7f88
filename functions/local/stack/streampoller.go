package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamstypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
	"github.com/movietrace/tracinglocks/schema"
)

// StreamHandler is the stream processor's Lambda handler.
type StreamHandler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// StreamsAPI is the part of the DynamoDB Streams client the poller uses:
// the same as streamproc's stream reader.
type StreamsAPI = streamproc.StreamsAPI

// StreamPoller does locally what Lambda's event source mapping does for a
// DynamoDB stream with FunctionResponseTypes ReportBatchItemFailures,
// starting position TRIM_HORIZON, no bisection and MaximumRetryAttempts:
//
//   - every shard is read in order, a child only after its parent is
//     closed and drained, new shards are picked up as they appear;
//   - records are handed to the handler in batches of up to BatchSize, as a
//     real events.DynamoDBEvent;
//   - a handler error fails the whole batch; a BatchItemFailures response
//     checkpoints the records before the lowest reported sequence number and
//     retries from it (AT_SEQUENCE_NUMBER); an identifier that is not a
//     sequence number of the batch fails the whole batch, as in Lambda;
//   - after MaxRetries retries of one batch its records are discarded with
//     an error log naming the sequence range (what the on-failure
//     destination would receive), and the shard moves on.
//
// A StreamPoller runs in one goroutine (Run); it is not safe for concurrent
// use.
type StreamPoller struct {
	Client    StreamsAPI
	StreamARN string
	Handle    StreamHandler
	Log       *slog.Logger

	BatchSize  int           // records per invocation, 1-1000 (default 100)
	MaxRetries int           // retries of one failing batch before it is discarded (default 3; negative: none)
	Idle       time.Duration // pause when every shard is caught up (default 100 ms)
	// Discover is how often DescribeStream looks for new shards (default 1 s).
	Discover time.Duration
	// Invoke bounds one handler invocation, like a function timeout
	// (default 5 min).
	Invoke time.Duration

	shards   map[string]*shard
	order    []string // parents before children
	lastScan time.Time
	// stats, for tests and logs
	invocations, retried, discarded int
}

type shard struct {
	id, parent string
	iter       *string
	checkpoint string // sequence number of the last record that took effect
	retryFrom  string // first sequence number of the batch to retry
	retries    int
	notBefore  time.Time
	done       bool // closed and drained, or gone
}

func (p *StreamPoller) defaults() {
	if p.BatchSize <= 0 || p.BatchSize > 1000 {
		p.BatchSize = 100
	}
	if p.MaxRetries == 0 {
		p.MaxRetries = 3
	}
	if p.Idle <= 0 {
		p.Idle = 100 * time.Millisecond
	}
	if p.Discover <= 0 {
		p.Discover = time.Second
	}
	if p.Invoke <= 0 {
		p.Invoke = 5 * time.Minute
	}
	if p.shards == nil {
		p.shards = map[string]*shard{}
	}
}

// Run polls until stop ends. A handler invocation in flight when stop ends
// runs on with invoke (a context the caller cancels later, to bound a
// graceful shutdown).
func (p *StreamPoller) Run(stop, invoke context.Context) {
	p.defaults()
	for stop.Err() == nil {
		busy, err := p.Poll(stop, invoke)
		switch {
		case err != nil && stop.Err() == nil:
			p.Log.Warn("stream poll", slog.String("error", err.Error()))
			sleep(stop, time.Second) // DynamoDB Local may be gone: do not spin
		case !busy:
			sleep(stop, p.Idle)
		}
	}
}

// Poll discovers shards (at most every Discover) and reads one page of each
// readable shard, invoking the handler for what it read. It reports whether
// it handed any records to the handler.
func (p *StreamPoller) Poll(stop, invoke context.Context) (busy bool, err error) {
	p.defaults()
	if time.Since(p.lastScan) >= p.Discover {
		if err := p.discover(stop); err != nil {
			return false, err
		}
		p.lastScan = time.Now()
	}
	var errs []error
	for _, id := range p.order {
		s := p.shards[id]
		if s.done || time.Now().Before(s.notBefore) {
			continue
		}
		if par, ok := p.shards[s.parent]; ok && !par.done {
			continue // parent first
		}
		n, err := p.step(stop, invoke, s)
		busy = busy || n > 0
		if err != nil {
			errs = append(errs, fmt.Errorf("shard %s: %w", id, err))
		}
	}
	return busy, errors.Join(errs...)
}

func (p *StreamPoller) discover(ctx context.Context) error {
	all, err := streamproc.ListShards(ctx, p.Client, p.StreamARN)
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, s := range all {
		listed[aws.ToString(s.ShardId)] = true
	}
	for added := true; added; {
		added = false
		for _, s := range all {
			id, parent := aws.ToString(s.ShardId), aws.ToString(s.ParentShardId)
			if _, ok := p.shards[id]; ok {
				continue
			}
			if parent != "" && listed[parent] && p.shards[parent] == nil {
				continue // add the parent first
			}
			if !listed[parent] {
				parent = "" // trimmed away: nothing to wait for
			}
			p.shards[id] = &shard{id: id, parent: parent}
			p.order = append(p.order, id)
			added = true
			p.Log.Debug("stream shard found", slog.String("shard", id), slog.String("parent", parent))
		}
	}
	return nil
}

// step reads one page of s and invokes the handler with it. It returns the
// number of records handed over.
func (p *StreamPoller) step(stop, invoke context.Context, s *shard) (int, error) {
	if s.iter == nil {
		if err := p.position(stop, s); err != nil || s.done {
			return 0, err
		}
	}
	out, err := p.Client.GetRecords(stop, &dynamodbstreams.GetRecordsInput{ShardIterator: s.iter, Limit: aws.Int32(int32(p.BatchSize))})
	var expired *streamstypes.ExpiredIteratorException
	var trimmed *streamstypes.TrimmedDataAccessException
	var gone *streamstypes.ResourceNotFoundException
	switch {
	case errors.As(err, &expired):
		s.iter = nil // reposition from the checkpoint next time
		return 0, nil
	case errors.As(err, &trimmed):
		p.Log.Warn("stream records trimmed before they were processed: restarting the shard at TRIM_HORIZON", slog.String("shard", s.id))
		s.iter, s.checkpoint, s.retryFrom = nil, "", ""
		return 0, nil
	case errors.As(err, &gone):
		s.done = true
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("get records: %w", err)
	}
	if len(out.Records) == 0 {
		s.iter = out.NextShardIterator
		s.done = s.iter == nil
		return 0, nil
	}
	recs := make([]events.DynamoDBEventRecord, 0, len(out.Records))
	for _, r := range out.Records {
		lr, err := schema.FromStreamsRecord(r, p.StreamARN)
		if err != nil {
			return 0, fmt.Errorf("convert stream record: %w", err)
		}
		recs = append(recs, lr)
	}
	failed := p.invoke(invoke, recs)
	last := recs[len(recs)-1].Change.SequenceNumber
	if failed < 0 {
		s.checkpoint, s.iter, s.retryFrom, s.retries = last, out.NextShardIterator, "", 0
		s.done = s.iter == nil
		return len(recs), nil
	}
	if failed > 0 {
		s.checkpoint = recs[failed-1].Change.SequenceNumber
	}
	first := recs[failed].Change.SequenceNumber
	s.retries++
	if p.MaxRetries >= 0 && s.retries > p.MaxRetries {
		p.discarded += len(recs) - failed
		p.Log.Error("stream records discarded after retries (on-failure destination)",
			slog.String("shard", s.id), slog.String("firstSequenceNumber", first),
			slog.String("lastSequenceNumber", last), slog.Int("records", len(recs)-failed),
			slog.Int("retries", s.retries-1), slog.String("streamArn", p.StreamARN))
		s.checkpoint, s.iter, s.retryFrom, s.retries = last, out.NextShardIterator, "", 0
		s.done = s.iter == nil
		return len(recs), nil
	}
	p.retried++
	s.retryFrom, s.iter = first, nil
	s.notBefore = time.Now().Add(min(100*time.Millisecond<<(s.retries-1), 2*time.Second))
	p.Log.Warn("stream batch failed: retrying from the lowest failed record",
		slog.String("shard", s.id), slog.String("sequenceNumber", first), slog.Int("retry", s.retries))
	return len(recs), nil
}

// position gets s a fresh iterator: at the record to retry, after the
// checkpoint, or at the trim horizon.
func (p *StreamPoller) position(ctx context.Context, s *shard) error {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: &p.StreamARN, ShardId: &s.id, ShardIteratorType: streamstypes.ShardIteratorTypeTrimHorizon}
	switch {
	case s.retryFrom != "":
		in.ShardIteratorType, in.SequenceNumber = streamstypes.ShardIteratorTypeAtSequenceNumber, aws.String(s.retryFrom)
	case s.checkpoint != "":
		in.ShardIteratorType, in.SequenceNumber = streamstypes.ShardIteratorTypeAfterSequenceNumber, aws.String(s.checkpoint)
	}
	out, err := p.Client.GetShardIterator(ctx, in)
	var trimmed *streamstypes.TrimmedDataAccessException
	var gone *streamstypes.ResourceNotFoundException
	switch {
	case errors.As(err, &gone):
		s.done = true
		return nil
	case errors.As(err, &trimmed):
		s.checkpoint, s.retryFrom = "", ""
		return nil
	case err != nil:
		return fmt.Errorf("get shard iterator (%s): %w", in.ShardIteratorType, err)
	}
	s.iter = out.ShardIterator
	s.done = s.iter == nil
	return nil
}

// invoke calls the handler and returns the index of the first record to
// retry, or -1 when the whole batch took effect.
func (p *StreamPoller) invoke(parent context.Context, recs []events.DynamoDBEventRecord) int {
	p.invocations++
	ctx, cancel := context.WithTimeout(parent, p.Invoke)
	defer cancel()
	resp, err := safeStream(ctx, p.Handle, events.DynamoDBEvent{Records: recs})
	if err != nil {
		p.Log.Warn("stream handler returned an error: the whole batch is retried", slog.String("error", err.Error()), slog.Int("records", len(recs)))
		return 0
	}
	if len(resp.BatchItemFailures) == 0 {
		return -1
	}
	index := make(map[string]int, len(recs))
	for i, r := range recs {
		index[r.Change.SequenceNumber] = i
	}
	lowest := len(recs)
	for _, f := range resp.BatchItemFailures {
		i, ok := index[f.ItemIdentifier]
		if !ok {
			p.Log.Warn("stream handler reported an unknown item identifier: the whole batch is retried", slog.String("itemIdentifier", f.ItemIdentifier))
			return 0
		}
		lowest = min(lowest, i)
	}
	return lowest
}

// safeStream turns a handler panic into an error, as Lambda reports a
// crashed invocation as a function error.
func safeStream(ctx context.Context, h StreamHandler, ev events.DynamoDBEvent) (resp events.DynamoDBEventResponse, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("stream handler panicked: %v", r)
		}
	}()
	return h(ctx, ev)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

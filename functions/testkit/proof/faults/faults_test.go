// Package faults runs whole traces end to end on DynamoDB Local and the SQS
// emulator (API-style StartTrace commits, the movies table's real stream read
// with streamproc.StreamReader, the stream handler enqueuing on a real queue,
// the worker's SQS handler) and injects faults:
//
//   - a worker killed at a random frame (its context cancelled: no terminal
//     write);
//   - every SQS message delivered 1-3 times, the copies of all jobs shuffled
//     (out of order, interleaved across jobs);
//   - stream records handed to the handler in batches split at random
//     points, some batches redelivered twice, and one SQS or audit call of a
//     batch failing once (the handler's BatchItemFailures are honoured by
//     redelivering from the reported sequence number);
//   - clock skew of up to FAULTS_SKEW between writers (each writer's and each
//     worker's Now is real time plus its own offset).
//
// After each run: the audit table holds exactly one item per transition
// (events.Derive over the deduplicated stream record sequence, and as many
// started items as StartTraces committed), the movie row is legal, and after
// a final successful retrace no frame of a dead job remains.
//
// FAULTS_RUNS sets the number of runs (default 3, `make proof` sets more);
// with PROOF_COUNTS set, `proof-count faults=N` is appended.
package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/queue"
	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
	"github.com/movietrace/tracinglocks/functions/testkit/proof"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/schema"
)

const (
	lease     = 2 * time.Second  // jobs that may be killed or taken over
	longLease = 20 * time.Second // the final retrace
	maxSkew   = time.Second
)

var users = []domain.User{{ID: "u-alice", Name: "Alice"}, {ID: "u-bob", Name: "Bob"}, {ID: "u-carol", Name: "Carol"}}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// faultCounts counts the injected faults by kind.
type faultCounts struct {
	kills, extraDeliveries, reorders, streamFailures, streamRedeliveries, streamSplits, skewedClocks atomic.Int64
	// poison: undecodable stream records slipped into the batches.
	poison atomic.Int64
}

func (c *faultCounts) total() int64 {
	return c.kills.Load() + c.extraDeliveries.Load() + c.reorders.Load() + c.streamFailures.Load() +
		c.streamRedeliveries.Load() + c.streamSplits.Load() + c.skewedClocks.Load() + c.poison.Load()
}

// failOnce fails the n-th call (counting from 1) made through it, once.
type failOnce struct {
	mu    sync.Mutex
	calls int
	armed int // 0: disarmed
}

func (f *failOnce) arm(n int) { f.mu.Lock(); f.calls, f.armed = 0, n; f.mu.Unlock() }

// fire reports whether this call must fail, and disarms if so.
func (f *failOnce) fire() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.armed == 0 {
		return false
	}
	f.calls++
	if f.calls == f.armed {
		f.armed = 0
		return true
	}
	return false
}

// fired reports whether the armed failure happened.
func (f *failOnce) fired() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.armed == 0 && f.calls > 0
}

var errInjected = errors.New("injected fault")

type faultyQueue struct {
	*sqs.Client
	f *failOnce
}

func (q faultyQueue) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, o ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	if q.f.fire() {
		return nil, errInjected
	}
	return q.Client.SendMessageBatch(ctx, in, o...)
}

type faultyAudit struct {
	*dynamodb.Client
	f *failOnce
}

func (a faultyAudit) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if a.f.fire() {
		return nil, errInjected
	}
	return a.Client.TransactWriteItems(ctx, in, o...)
}

type env struct {
	t        *testing.T
	ddb      *dynamodb.Client
	sqs      *sqs.Client
	tables   dynamo.Tables
	movies   *dynamo.MovieStore
	frames   *dynamo.FrameStore
	queueURL string
	queueARN string
	// poisonURL is the stream handler's poison queue; poisonSeqs the
	// sequence numbers of the poison records slipped into the batches.
	poisonURL  string
	poisonSeqs map[string]bool
	reader     *streamproc.StreamReader
	handler    *streamproc.Handler
	fail       *failOnce
	counts     *faultCounts
	log        *slog.Logger

	// every stream record read, deduplicated by sequence number, in order
	seen    map[string]bool
	records []lambdaevents.DynamoDBEventRecord
}

func newEnv(t *testing.T, counts *faultCounts) *env {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e := &env{t: t, ddb: testenv.DynamoDB(t), sqs: testenv.SQS(t), fail: &failOnce{}, counts: counts,
		log: slog.New(slog.NewTextHandler(io.Discard, nil)), seen: map[string]bool{}, poisonSeqs: map[string]bool{}}
	e.tables = dynamo.Tables{Movies: testenv.UniqueName(t, "movies"), Frames: testenv.UniqueName(t, "frames"), Audit: testenv.UniqueName(t, "audit")}
	if err := dynamo.CreateTables(ctx, e.ddb, e.tables); err != nil {
		t.Fatalf("create tables: %v", err)
	}
	e.movies = dynamo.NewMovieStore(e.ddb, e.tables.Movies)
	e.frames = dynamo.NewFrameStore(e.ddb, e.tables.Frames)
	q, err := e.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(testenv.UniqueName(t, "jobs")),
		Attributes: map[string]string{"VisibilityTimeout": "600"}})
	if err != nil {
		t.Fatalf("create queue: %v", err)
	}
	e.queueURL = *q.QueueUrl
	pq, err := e.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(testenv.UniqueName(t, "poison"))})
	if err != nil {
		t.Fatalf("create poison queue: %v", err)
	}
	e.poisonURL = *pq.QueueUrl
	attrs, err := e.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	e.queueARN = attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	arn, err := streamproc.StreamARN(ctx, e.ddb, e.tables.Movies)
	if err != nil {
		t.Fatal(err)
	}
	e.reader = streamproc.NewStreamReader(testenv.Streams(t), arn)
	e.handler, err = streamproc.New(streamproc.Options{
		Queue: faultyQueue{e.sqs, e.fail}, Audit: faultyAudit{e.ddb, e.fail}, QueueURL: e.queueURL, AuditTable: e.tables.Audit,
		PoisonQueueURL: e.poisonURL,
		Log:            e.log, Backoff: func(int) time.Duration { return 0 },
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// skewed returns a clock offset by up to maxSkew either way.
func (e *env) skewed(rng *rand.Rand) testenv.SkewedClock {
	off := time.Duration(rng.Int64N(int64(2*maxSkew))) - maxSkew
	if off != 0 {
		e.counts.skewedClocks.Add(1)
	}
	return testenv.SkewedClock{Offset: off}
}

// pumpStream reads the new stream records and hands them to the handler in
// random batches with faults, until every record took effect.
func (e *env) pumpStream(rng *rand.Rand) {
	ctx := context.Background()
	recs, err := e.reader.Read(ctx)
	if err != nil {
		e.t.Fatalf("read stream: %v", err)
	}
	for _, r := range recs {
		if !e.seen[r.Change.SequenceNumber] {
			e.seen[r.Change.SequenceNumber] = true
			e.records = append(e.records, r)
		}
	}
	pending := recs
	for tries := 0; len(pending) > 0; tries++ {
		if tries > 200 {
			e.t.Fatalf("stream batches never took effect")
		}
		k := 1 + rng.IntN(len(pending))
		if k < len(pending) {
			e.counts.streamSplits.Add(1)
		}
		batch := append([]lambdaevents.DynamoDBEventRecord(nil), pending[:k]...)
		slipped := ""
		if rng.IntN(4) == 0 {
			// A poison record (a row no decoder can read) slipped in at a
			// random place: set aside, it must block and drop nothing.
			at := rng.IntN(len(batch) + 1)
			p := e.poisonOf(batch[min(at, len(batch)-1)])
			batch, slipped = slices.Insert(batch, at, p), p.Change.SequenceNumber
		}
		if rng.IntN(3) == 0 {
			e.fail.arm(1 + rng.IntN(2))
		}
		resp, err := e.handler.Handle(ctx, lambdaevents.DynamoDBEvent{Records: batch})
		if e.fail.fired() {
			e.counts.streamFailures.Add(1)
		}
		e.fail.arm(0)
		if err != nil {
			continue // the whole batch is retried
		}
		done, retryPoison := k, -1
		if len(resp.BatchItemFailures) > 0 {
			seq := resp.BatchItemFailures[0].ItemIdentifier
			done = -1
			fromPending := 0 // the batch's records of pending before the failed one
			for i, r := range batch {
				if r.Change.SequenceNumber == seq {
					done = fromPending
					if seq == slipped {
						retryPoison = i // its set-aside failed: Lambda retries from it
					}
					break
				}
				if r.Change.SequenceNumber != slipped {
					fromPending++
				}
			}
			if done < 0 {
				e.t.Fatalf("batch item failure %q is not in the batch", seq)
			}
		}
		if rng.IntN(3) == 0 { // Lambda delivers the batch again
			e.counts.streamRedeliveries.Add(1)
			if _, err := e.handler.Handle(ctx, lambdaevents.DynamoDBEvent{Records: batch}); err != nil {
				e.log.Info("redelivered batch failed", "err", err)
			}
		}
		pending = pending[done:]
		if retryPoison >= 0 {
			pending = append([]lambdaevents.DynamoDBEventRecord{batch[retryPoison]}, pending...)
		}
	}
}

// poisonOf returns a copy of rec that can never decode (its version is not
// a number), with a sequence number of its own.
func (e *env) poisonOf(rec lambdaevents.DynamoDBEventRecord) lambdaevents.DynamoDBEventRecord {
	img := maps.Clone(rec.Change.NewImage)
	img[schema.AttrVersion] = lambdaevents.NewStringAttribute("not a number")
	rec.Change.NewImage = img
	rec.Change.SequenceNumber = fmt.Sprintf("99%019d", len(e.poisonSeqs)+1)
	rec.EventID = "poison-" + rec.Change.SequenceNumber
	if _, err := schema.DecodeRecord(rec); err == nil {
		e.t.Fatal("the poison record decodes")
	}
	e.poisonSeqs[rec.Change.SequenceNumber] = true
	e.counts.poison.Add(1)
	return rec
}

// poisonLost returns how many of the poison records slipped in are not on
// the poison queue (set aside at least once each); it drains the queue.
func (e *env) poisonLost() int {
	ctx := context.Background()
	found := map[string]bool{}
	for empty := 0; empty < 2; {
		r, err := e.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &e.poisonURL, MaxNumberOfMessages: 10})
		if err != nil {
			e.t.Fatalf("receive poison: %v", err)
		}
		if len(r.Messages) == 0 {
			empty++
			continue
		}
		for _, m := range r.Messages {
			var p streamproc.PoisonRecord
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &p); err != nil {
				e.t.Fatalf("poison message: %v", err)
			}
			found[p.SequenceNumber] = true
			if _, err := e.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &e.poisonURL, ReceiptHandle: m.ReceiptHandle}); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	lost := 0
	for seq := range e.poisonSeqs {
		if !found[seq] {
			lost++
			e.t.Errorf("poison record %s was never set aside", seq)
		}
	}
	return lost
}

// receive takes every message now on the queue (and deletes it: the
// deliveries are then under the test's control).
func (e *env) receive() []lambdaevents.SQSMessage {
	ctx := context.Background()
	var out []lambdaevents.SQSMessage
	for empty := 0; empty < 2; {
		r, err := e.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &e.queueURL, MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			e.t.Fatalf("receive: %v", err)
		}
		if len(r.Messages) == 0 {
			empty++
			continue
		}
		for _, m := range r.Messages {
			out = append(out, queue.LambdaMessage(m, e.queueARN, "us-east-1"))
			if _, err := e.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &e.queueURL, ReceiptHandle: m.ReceiptHandle}); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	return out
}

// plans records the plan each job's tracer was given.
type plans struct {
	mu sync.Mutex
	m  map[string]domain.TracePlan
}

func (p *plans) set(job string, pl domain.TracePlan) { p.mu.Lock(); p.m[job] = pl; p.mu.Unlock() }

// deliver hands one message to a fresh worker, which is killed at a random
// frame if kill is set.
func (e *env) deliver(rng *rand.Rand, msg lambdaevents.SQSMessage, kill bool, leaseFor time.Duration, pl *plans) worker.Outcome {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	synth := tracer.NewSynthetic()
	killAt := -1
	tr := tracer.Func(func(ctx context.Context, m domain.Movie, p domain.TracePlan, emit func(domain.Frame) error) error {
		job, _ := events.DecodeTraceJob(msg.Body)
		pl.set(job.JobID, p)
		if kill && p.End > p.From {
			killAt = p.From + rng.IntN(p.End-p.From)
		}
		return synth.Trace(ctx, m, p, func(f domain.Frame) error {
			if f.Index == killAt {
				e.counts.kills.Add(1)
				cancel()
			}
			return emit(f)
		})
	})
	store := dynamo.NewJobStore(e.movies, e.frames)
	w, err := worker.New(worker.Options{
		Movies: store, Frames: store, Tracer: tr, Log: e.log, Clock: e.skewed(rng),
		LeaseDuration: leaseFor, Backoff: func(int) time.Duration { return 0 },
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return w.HandleMessage(ctx, msg)
}

// startTrace commits StartTrace with a skewed clock, retrying while the row
// still carries a lease that the writer's clock sees as live.
func (e *env) startTrace(rng *rand.Rand, movieID string, from int, leaseFor time.Duration) string {
	now := e.skewed(rng).Now
	deadline := time.Now().Add(30 * time.Second)
	for {
		job := token.New()
		_, err := e.movies.Commit(context.Background(), movieID, domain.StartTrace{JobID: job,
			User: users[rng.IntN(len(users))], FromFrame: from, Now: now(), Duration: leaseFor})
		if err == nil {
			return job
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("StartTrace never accepted: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestFaultsEndToEnd(t *testing.T) {
	runs := envInt("FAULTS_RUNS", 3)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FAULTS_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("FAULTS_SEED=%d FAULTS_RUNS=%d", seed, runs)
	counts := &faultCounts{}
	e := newEnv(t, counts)
	for run := 0; run < runs; run++ {
		rng := rand.New(rand.NewPCG(seed, uint64(run)))
		e.oneRun(rng, fmt.Sprintf("m%d", run))
		if t.Failed() {
			t.Fatalf("run %d failed (FAULTS_SEED=%d)", run, seed)
		}
	}
	t.Logf("faults injected: %d (kills %d, extra SQS deliveries %d, reorders %d, stream call failures %d, stream redeliveries %d, stream splits %d, skewed clocks %d, poison records %d)",
		counts.total(), counts.kills.Load(), counts.extraDeliveries.Load(), counts.reorders.Load(), counts.streamFailures.Load(),
		counts.streamRedeliveries.Load(), counts.streamSplits.Load(), counts.skewedClocks.Load(), counts.poison.Load())
	lost := e.poisonLost()
	if err := proof.AppendCounts("faults", counts.total(), "poison_records", counts.poison.Load(), "poison_lost", lost); err != nil {
		t.Fatal(err)
	}
}

func (e *env) oneRun(rng *rand.Rand, movieID string) {
	t := e.t
	n := 30 + rng.IntN(50)
	m, err := domain.NewMovie(movieID, "Movie "+movieID, n, 25, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "tip", Label: "tip", X: 0.5, Y: 0.5}}
	if err := e.movies.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	pl := &plans{m: map[string]domain.TracePlan{}}
	started := map[string]bool{}
	var pool []lambdaevents.SQSMessage
	jobs := 2 + rng.IntN(2)
	for j := 0; j < jobs; j++ {
		started[e.startTrace(rng, movieID, rng.IntN(n), lease)] = true
		e.pumpStream(rng)
		for _, msg := range e.receive() {
			copies := 1 + rng.IntN(3)
			e.counts.extraDeliveries.Add(int64(copies - 1))
			for c := 0; c < copies; c++ {
				pool = append(pool, msg)
			}
		}
		before := fmt.Sprint(pool)
		rng.Shuffle(len(pool), func(a, b int) { pool[a], pool[b] = pool[b], pool[a] })
		if fmt.Sprint(pool) != before {
			e.counts.reorders.Add(1)
		}
		// Deliver a random part of the pool now, the rest later.
		k := rng.IntN(len(pool) + 1)
		for _, msg := range pool[:k] {
			e.deliver(rng, msg, rng.IntN(2) == 0, lease, pl)
		}
		pool = pool[k:]
		e.checkRow(movieID)
	}
	// The final retrace: no kill, a long lease; the leftover copies of older
	// jobs are delivered around it.
	final := e.startTrace(rng, movieID, rng.IntN(n), longLease)
	started[final] = true
	e.pumpStream(rng)
	for _, msg := range e.receive() {
		pool = append(pool, msg, msg)
		e.counts.extraDeliveries.Add(1)
	}
	rng.Shuffle(len(pool), func(a, b int) { pool[a], pool[b] = pool[b], pool[a] })
	for _, msg := range pool {
		job, _ := events.DecodeTraceJob(msg.Body)
		e.deliver(rng, msg, false, map[bool]time.Duration{true: longLease, false: lease}[job.JobID == final], pl)
	}
	e.pumpStream(rng)
	e.checkRow(movieID)

	row, err := e.movies.Get(context.Background(), movieID)
	if err != nil {
		t.Fatal(err)
	}
	if row.Status != domain.StatusTraced || row.LastJob == nil || row.LastJob.JobID != final {
		t.Fatalf("%s: final retrace did not complete: status %s lastJob %+v", movieID, row.Status, row.LastJob)
	}
	completed := e.checkAudit(movieID, started)
	e.checkFrames(movieID, final, completed, pl)
}

// checkRow: the row decodes and is in a legal state.
func (e *env) checkRow(movieID string) {
	row, err := e.movies.Get(context.Background(), movieID)
	if err != nil {
		e.t.Fatalf("%s: row does not decode: %v", movieID, err)
	}
	now := time.Now()
	if l := row.Lease; l != nil {
		if l.Kind == domain.LeaseTracing && row.Status != domain.StatusTracing {
			e.t.Errorf("%s: tracing lease with status %s", movieID, row.Status)
		}
		if row.Status == domain.StatusTracing && l.LiveAt(now.Add(-2*maxSkew)) && l.Kind != domain.LeaseTracing {
			e.t.Errorf("%s: status tracing with a live %s lease", movieID, l.Kind)
		}
	}
}

// checkAudit: exactly one audit item per derived transition.
// It returns the jobs that completed.
func (e *env) checkAudit(movieID string, started map[string]bool) map[string]bool {
	completed := map[string]bool{}
	want := map[string]bool{}
	for _, r := range e.records {
		c, err := schema.DecodeRecord(r)
		if err != nil {
			e.t.Fatalf("decode record: %v", err)
		}
		if (c.New != nil && c.New.ID != movieID) || (c.New == nil && c.Old != nil && c.Old.ID != movieID) {
			continue
		}
		for _, ev := range events.Derive(c.Old, c.New) {
			if want[ev.AuditKey()] {
				e.t.Errorf("%s: %s derived twice from distinct records", movieID, ev.AuditKey())
			}
			want[ev.AuditKey()] = true
			if ev.Type == events.TracingCompleted {
				completed[ev.JobID] = true
			}
		}
	}
	nStarted := 0
	for k := range want {
		if len(k) > len(events.TracingStarted) && k[len(k)-len(events.TracingStarted):] == string(events.TracingStarted) {
			nStarted++
		}
	}
	if nStarted != len(started) {
		e.t.Errorf("%s: %d started transitions in the stream, %d StartTraces committed", movieID, nStarted, len(started))
	}
	got := map[string]int{}
	p := dynamodb.NewQueryPaginator(e.ddb, &dynamodb.QueryInput{TableName: &e.tables.Audit, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("movieId = :m"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":m": &types.AttributeValueMemberS{Value: movieID}}})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			e.t.Fatal(err)
		}
		for _, item := range page.Items {
			it, err := schema.UnmarshalAuditItem(item)
			if err != nil {
				e.t.Fatal(err)
			}
			got[it.EventKey]++
		}
	}
	for k := range want {
		if got[k] != 1 {
			e.t.Errorf("%s: audit item %s present %d times, want 1", movieID, k, got[k])
		}
	}
	for k := range got {
		if !want[k] {
			e.t.Errorf("%s: audit item %s for no transition", movieID, k)
		}
	}
	return completed
}

// checkFrames: after the final retrace, every frame at or after its
// ClearFrom is the final job's, and no dead job's frame remains at or after
// that job's ClearFrom (a dead job: traced, never completed).
func (e *env) checkFrames(movieID, final string, completed map[string]bool, pl *plans) {
	fp, ok := pl.m[final]
	if !ok {
		e.t.Fatalf("%s: final job never traced", movieID)
	}
	var frames []domain.Frame
	from := 0
	for {
		page, next, err := e.frames.Page(context.Background(), movieID, from, dynamo.MaxFramePage)
		if err != nil {
			e.t.Fatal(err)
		}
		frames = append(frames, page...)
		if next == nil {
			break
		}
		from = *next
	}
	for _, f := range frames {
		if f.Index >= fp.ClearFrom && f.JobID != final {
			e.t.Errorf("%s: frame %d (>= final ClearFrom %d) has job %s, not the final %s", movieID, f.Index, fp.ClearFrom, f.JobID, final)
		}
		if f.JobID != final && !completed[f.JobID] {
			if p, ok := pl.m[f.JobID]; ok && f.Index >= p.ClearFrom {
				e.t.Errorf("%s: frame %d of dead job %s (from %d) remains", movieID, f.Index, f.JobID, p.ClearFrom)
			}
		}
	}
}

package streamproc_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/testkit/awscount"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/schema"
)

// env is one test's stack on the emulators: fresh tables and queue, the
// movie store the API uses, a reader of the movies table's real stream and
// a stream-processor handler whose requests are counted.
type env struct {
	tb       testing.TB
	ddb      *dynamodb.Client
	sqs      *sqs.Client
	tables   dynamo.Tables
	store    *dynamo.MovieStore
	queueURL string
	// poisonURL is the poison queue, where undecodable records are set aside.
	poisonURL string
	reader    *streamproc.StreamReader
	counter   *awscount.Counter
	logs      *testenv.LogBuffer
	handler   *streamproc.Handler
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	counter := &awscount.Counter{}
	ddb := testenv.DynamoDB(tb, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, counter.APIOption) })
	sq := testenv.SQS(tb, func(o *sqs.Options) { o.APIOptions = append(o.APIOptions, counter.APIOption) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e := &env{tb: tb, ddb: ddb, sqs: sq, counter: counter, logs: &testenv.LogBuffer{}}
	e.tables = testenv.NewTables(tb, ddb)
	e.queueURL = e.newQueue()
	e.poisonURL = e.newQueue()
	e.store = dynamo.NewMovieStore(ddb, e.tables.Movies)
	arn, err := streamproc.StreamARN(ctx, ddb, e.tables.Movies)
	if err != nil {
		tb.Fatal(err)
	}
	e.reader = streamproc.NewStreamReader(testenv.Streams(tb), arn)
	e.handler = e.newHandler(sq, ddb)
	return e
}

func (e *env) newQueue() string {
	e.tb.Helper()
	out, err := e.sqs.CreateQueue(context.Background(), &sqs.CreateQueueInput{
		QueueName:  aws.String(testenv.UniqueName(e.tb, "jobs")),
		Attributes: map[string]string{"VisibilityTimeout": "600"},
	})
	if err != nil {
		e.tb.Fatalf("create queue: %v", err)
	}
	return *out.QueueUrl
}

// newAuditTable gives the env a fresh, empty audit table.
func (e *env) newAuditTable() {
	e.tb.Helper()
	t := dynamo.Tables{Audit: testenv.UniqueName(e.tb, "audit")}
	for _, in := range t.Schemas() {
		if *in.TableName != t.Audit {
			continue
		}
		if _, err := e.ddb.CreateTable(context.Background(), in); err != nil {
			e.tb.Fatal(err)
		}
	}
	e.tables.Audit = t.Audit
}

func (e *env) newHandler(q streamproc.QueueAPI, a streamproc.AuditAPI) *streamproc.Handler {
	e.tb.Helper()
	h, err := streamproc.New(streamproc.Options{
		Queue: q, Audit: a, QueueURL: e.queueURL, AuditTable: e.tables.Audit, PoisonQueueURL: e.poisonURL,
		Log: slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Backoff: noBackoff,
	})
	if err != nil {
		e.tb.Fatal(err)
	}
	return h
}

func noBackoff(int) time.Duration { return 0 }

// read returns the stream records written since the last read.
func (e *env) read() []lambdaevents.DynamoDBEventRecord {
	e.tb.Helper()
	recs, err := e.reader.Read(context.Background())
	if err != nil {
		e.tb.Fatalf("read stream: %v", err)
	}
	return recs
}

// handle runs the handler on records and returns the reported sequence numbers.
func (e *env) handle(h *streamproc.Handler, recs []lambdaevents.DynamoDBEventRecord) []string {
	e.tb.Helper()
	resp, err := h.Handle(context.Background(), lambdaevents.DynamoDBEvent{Records: recs})
	if err != nil {
		e.tb.Fatalf("handle: %v", err)
	}
	var seqs []string
	for _, f := range resp.BatchItemFailures {
		seqs = append(seqs, f.ItemIdentifier)
	}
	return seqs
}

// mustHandle runs the env's handler and requires full success.
func (e *env) mustHandle(recs []lambdaevents.DynamoDBEventRecord) {
	e.tb.Helper()
	if failed := e.handle(e.handler, recs); len(failed) != 0 {
		e.tb.Fatalf("batch failures %v; logs:\n%s", failed, e.logs)
	}
}

// drain receives every message now on the queue (none is redelivered for
// ten minutes) and returns the decoded jobs.
func (e *env) drain() []events.TraceJob {
	e.tb.Helper()
	var jobs []events.TraceJob
	for _, body := range e.receiveAll(e.queueURL) {
		j, err := events.DecodeTraceJob(body)
		if err != nil {
			e.tb.Fatalf("message %q: %v", body, err)
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// poisoned receives every message now on the poison queue.
func (e *env) poisoned() []streamproc.PoisonRecord {
	e.tb.Helper()
	var out []streamproc.PoisonRecord
	for _, body := range e.receiveAll(e.poisonURL) {
		var p streamproc.PoisonRecord
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			e.tb.Fatalf("poison message %q: %v", body, err)
		}
		out = append(out, p)
	}
	return out
}

// receiveAll receives the bodies of every message now on a queue (none is
// redelivered for ten minutes).
func (e *env) receiveAll(url string) []string {
	e.tb.Helper()
	var bodies []string
	for {
		out, err := e.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 600,
		})
		if err != nil {
			e.tb.Fatalf("receive: %v", err)
		}
		if len(out.Messages) == 0 {
			return bodies
		}
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
		}
	}
}

// audit returns every audit item, keyed by "movieId eventKey".
func (e *env) audit() map[string]schema.AuditItem {
	e.tb.Helper()
	out := map[string]schema.AuditItem{}
	for key, item := range e.rawAudit() {
		it, err := schema.UnmarshalAuditItem(item)
		if err != nil {
			e.tb.Fatal(err)
		}
		out[key] = it
	}
	return out
}

// rawAudit returns every audit item as stored.
func (e *env) rawAudit() map[string]map[string]types.AttributeValue {
	e.tb.Helper()
	out := map[string]map[string]types.AttributeValue{}
	p := dynamodb.NewScanPaginator(e.ddb, &dynamodb.ScanInput{TableName: &e.tables.Audit, ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			e.tb.Fatal(err)
		}
		for _, item := range page.Items {
			it, err := schema.UnmarshalAuditItem(item)
			if err != nil {
				e.tb.Fatal(err)
			}
			out[it.MovieID+" "+it.EventKey] = item
		}
	}
	return out
}

// apply commits a command through the API's store.
func (e *env) apply(movieID string, c domain.Command) domain.Movie {
	e.tb.Helper()
	m, err := e.store.Commit(context.Background(), movieID, c)
	if err != nil {
		e.tb.Fatalf("%T: %v", c, err)
	}
	return m
}

func (e *env) createMovie(id string, at time.Time) domain.Movie {
	e.tb.Helper()
	m, err := domain.NewMovie(id, "Movie "+id, 300, 30, at)
	if err != nil {
		e.tb.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "m1", Label: "tip", X: 0.5, Y: 0.5}}
	if err := e.store.Create(context.Background(), m); err != nil {
		e.tb.Fatal(err)
	}
	return m
}

var (
	t0    = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	alice = domain.User{ID: "u-alice", Name: "Alice"}
	bob   = domain.User{ID: "u-bob", Name: "Bob"}
	lease = domain.DefaultLeaseDuration
)

func newID() string { return token.New() }

// hostileFailure is what a careless worker might report.
const hostileFailure = "open /var/task/secrets/config.yaml: AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY " +
	"AKIAIOSFODNN7EXAMPLE https://admin:hunter2@db.example.invalid:5432/x lease 0123456789abcdef0123456789abcdef\n" +
	"goroutine 1 [running]:\nmain.trace()\n\t/src/worker/trace.go:88 +0x1d"

// leaseIDs returns every analysis lease ID in the records' images: the
// capabilities that must never reach an audit item or a log line.
func leaseIDs(recs []lambdaevents.DynamoDBEventRecord) []string {
	seen := map[string]bool{}
	for _, r := range recs {
		for _, img := range []map[string]lambdaevents.DynamoDBAttributeValue{r.Change.OldImage, r.Change.NewImage} {
			l, ok := img[schema.AttrLease]
			if !ok || l.DataType() != lambdaevents.DataTypeMap {
				continue
			}
			m := l.Map()
			if k, ok := m["kind"]; ok && k.DataType() == lambdaevents.DataTypeString && k.String() == string(domain.LeaseAnalysis) {
				if id, ok := m["id"]; ok && id.DataType() == lambdaevents.DataTypeString {
					seen[id.String()] = true
				}
			}
		}
	}
	var out []string
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// assertNoLeak fails if any of ids occurs in the audit table or the logs.
func (e *env) assertNoLeak(ids []string) {
	e.tb.Helper()
	b, err := json.Marshal(e.audit())
	if err != nil {
		e.tb.Fatal(err)
	}
	logs := e.logs.String()
	for _, id := range ids {
		if strings.Contains(string(b), id) {
			e.tb.Errorf("lease ID %s in the audit table", id)
		}
		if strings.Contains(logs, id) {
			e.tb.Errorf("lease ID %s in the logs", id)
		}
	}
}

// failingQueue fails every entry for the poisoned job IDs, passing the rest
// to the real queue.
type failingQueue struct {
	streamproc.QueueAPI
	poison map[string]bool
	calls  int
}

func (f *failingQueue) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	f.calls++
	var pass []sqstypes.SendMessageBatchRequestEntry
	var failed []sqstypes.BatchResultErrorEntry
	for _, e := range in.Entries {
		if f.poison[aws.ToString(e.Id)] {
			failed = append(failed, sqstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InternalError"), SenderFault: false})
		} else {
			pass = append(pass, e)
		}
	}
	out := &sqs.SendMessageBatchOutput{}
	if len(pass) > 0 {
		cp := *in
		cp.Entries = pass
		real, err := f.QueueAPI.SendMessageBatch(ctx, &cp, opts...)
		if err != nil {
			return nil, err
		}
		out = real
	}
	out.Failed = append(out.Failed, failed...)
	return out, nil
}

// failingAudit cancels every transaction holding a poisoned event key, the
// way DynamoDB reports throttling of one item, writing nothing; other
// transactions reach the real table.
type failingAudit struct {
	streamproc.AuditAPI
	poison map[string]bool
	calls  int
}

func (f *failingAudit) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	f.calls++
	reasons := make([]types.CancellationReason, len(in.TransactItems))
	hit := false
	for i, it := range in.TransactItems {
		reasons[i].Code = aws.String("None")
		if k, ok := it.Put.Item[schema.AttrEventKey].(*types.AttributeValueMemberS); ok && f.poison[k.Value] {
			reasons[i].Code = aws.String("ThrottlingError")
			hit = true
		}
	}
	if hit {
		return nil, &types.TransactionCanceledException{Message: aws.String("Transaction cancelled"), CancellationReasons: reasons}
	}
	return f.AuditAPI.TransactWriteItems(ctx, in, opts...)
}

// check that the streams client satisfies the reader's interface.
var _ streamproc.StreamsAPI = (*dynamodbstreams.Client)(nil)

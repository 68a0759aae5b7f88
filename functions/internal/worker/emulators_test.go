package worker_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/queue"
	"github.com/movietrace/tracinglocks/functions/testkit/awscount"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/schema"
)

type lambdaMessage = lambdaevents.SQSMessage

// emulators are the real parts of the tests that claim to test them:
// DynamoDB Local (through the worker's real adapter, dynamo.JobStore) and
// the SQS emulator.
type emulators struct {
	ddb      *dynamodb.Client
	sqs      *sqs.Client
	counter  *awscount.Counter
	tables   dynamo.Tables
	movies   *dynamo.MovieStore
	frames   *dynamo.FrameStore
	queueURL string
	queueARN string
}

// ddbStore is the worker's DynamoDB adapter with the test's inspection.
type ddbStore struct {
	*dynamo.JobStore
	movies *dynamo.MovieStore
	frames *dynamo.FrameStore
}

var _ testStore = ddbStore{}

func (s ddbStore) create(tb testing.TB, m domain.Movie) {
	tb.Helper()
	if err := s.movies.Create(context.Background(), m); err != nil {
		tb.Fatalf("create movie: %v", err)
	}
}

func (s ddbStore) get(tb testing.TB, id string) domain.Movie {
	tb.Helper()
	m, err := s.movies.Get(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// stored returns every stored frame of a movie, through Page.
func (s ddbStore) stored(tb testing.TB, id string) []domain.Frame {
	tb.Helper()
	var out []domain.Frame
	from := 0
	for {
		page, next, err := s.frames.Page(context.Background(), id, from, dynamo.MaxFramePage)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, page...)
		if next == nil {
			return out
		}
		from = *next
	}
}

// newEnv is one test's stack on the emulators: fresh tables, the stores
// the API and the worker use, a request counter on DynamoDB, the real clock.
func newEnv(tb testing.TB) *env {
	tb.Helper()
	counter := &awscount.Counter{}
	ddb := testenv.DynamoDB(tb, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, counter.APIOption) })
	em := &emulators{ddb: ddb, sqs: testenv.SQS(tb), counter: counter}
	em.tables = testenv.NewTables(tb, ddb)
	em.movies = dynamo.NewMovieStore(ddb, em.tables.Movies)
	em.frames = dynamo.NewFrameStore(ddb, em.tables.Frames)
	store := ddbStore{JobStore: dynamo.NewJobStore(em.movies, em.frames), movies: em.movies, frames: em.frames}
	return &env{tb: tb, store: store, clock: realClock, logs: &testenv.LogBuffer{}, emulators: em}
}

// newQueue creates the job queue with the given visibility timeout.
func (e *env) newQueue(visibility time.Duration) {
	e.tb.Helper()
	ctx := context.Background()
	out, err := e.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName:  aws.String(testenv.UniqueName(e.tb, "jobs")),
		Attributes: map[string]string{"VisibilityTimeout": strconv.Itoa(int(visibility / time.Second))},
	})
	if err != nil {
		e.tb.Fatalf("create queue: %v", err)
	}
	e.queueURL = *out.QueueUrl
	attrs, err := e.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		e.tb.Fatalf("queue attributes: %v", err)
	}
	e.queueARN = attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
}

// jobs is the worker's SQS adapter on the env's queue.
func (e *env) jobs() *queue.Jobs {
	e.tb.Helper()
	q, err := queue.NewJobs(e.sqs, e.queueURL)
	if err != nil {
		e.tb.Fatal(err)
	}
	return q
}

// send enqueues a job message and returns its message ID.
func (e *env) send(job events.TraceJob) string {
	e.tb.Helper()
	body, err := events.EncodeTraceJob(job)
	if err != nil {
		e.tb.Fatal(err)
	}
	out, err := e.sqs.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &e.queueURL, MessageBody: &body})
	if err != nil {
		e.tb.Fatalf("send: %v", err)
	}
	return *out.MessageId
}

// receive long-polls up to wait for at most n messages and returns them as
// Lambda delivers them. It does not delete them.
func (e *env) receive(n int, wait time.Duration) []lambdaevents.SQSMessage {
	e.tb.Helper()
	var out []lambdaevents.SQSMessage
	deadline := time.Now().Add(wait)
	for len(out) < n && time.Now().Before(deadline) {
		res, err := e.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: &e.queueURL, MaxNumberOfMessages: int32(min(n-len(out), 10)), WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			e.tb.Fatalf("receive: %v", err)
		}
		for _, m := range res.Messages {
			out = append(out, queue.LambdaMessage(m, e.queueARN, "us-east-1"))
		}
	}
	return out
}

// deleteMessages deletes what a handler response says succeeded, as the
// event source mapping does.
func (e *env) deleteMessages(msgs []lambdaevents.SQSMessage, resp lambdaevents.SQSEventResponse) {
	e.tb.Helper()
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for _, m := range msgs {
		if failed[m.MessageId] {
			continue
		}
		if _, err := e.sqs.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &e.queueURL, ReceiptHandle: &m.ReceiptHandle}); err != nil {
			e.tb.Fatalf("delete: %v", err)
		}
	}
}

func (e *env) auditItems(movieID string) map[string]schema.AuditItem {
	e.tb.Helper()
	out, err := e.ddb.Query(context.Background(), &dynamodb.QueryInput{
		TableName:                 &e.tables.Audit,
		KeyConditionExpression:    aws.String("movieId = :m"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":m": &ddbtypes.AttributeValueMemberS{Value: movieID}},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		e.tb.Fatal(err)
	}
	items := map[string]schema.AuditItem{}
	for _, raw := range out.Items {
		it, err := schema.UnmarshalAuditItem(raw)
		if err != nil {
			e.tb.Fatal(err)
		}
		items[it.EventKey] = it
	}
	return items
}

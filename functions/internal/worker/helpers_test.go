package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
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
	"github.com/movietrace/tracinglocks/functions/internal/awscount"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/internal/testenv"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

var (
	alice = domain.User{ID: "u-alice", Name: "Alice"}
	bob   = domain.User{ID: "u-bob", Name: "Bob"}
)

// env is one test's stack on the emulators: fresh tables and queue, the
// stores the API and the worker use, and a request counter on DynamoDB.
type env struct {
	tb       testing.TB
	ddb      *dynamodb.Client
	sqs      *sqs.Client
	counter  *awscount.Counter
	tables   dynamo.Tables
	movies   *dynamo.MovieStore
	frames   *dynamo.FrameStore
	queueURL string
	queueARN string
	logs     *testenv.LogBuffer
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	counter := &awscount.Counter{}
	ddb := testenv.DynamoDB(tb, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, counter.APIOption) })
	e := &env{tb: tb, ddb: ddb, sqs: testenv.SQS(tb), counter: counter, logs: &testenv.LogBuffer{}}
	e.tables = testenv.NewTables(tb, ddb)
	e.movies = dynamo.NewMovieStore(ddb, e.tables.Movies)
	e.frames = dynamo.NewFrameStore(ddb, e.tables.Frames)
	return e
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

// testWorker is a worker whose store calls are recorded.
type testWorker struct {
	*worker.Worker
	movies *recordingMovies
	frames *recordingFrames
}

// newWorker returns a worker on the env's stores, logging JSON into e.logs.
func (e *env) newWorker(tr tracer.Tracer, lease time.Duration) *testWorker {
	rm, rf := &recordingMovies{Movies: e.movies}, &recordingFrames{Frames: e.frames}
	w := worker.New(rm, rf, tr, logging.New(e.logs, slog.LevelDebug))
	w.LeaseDuration = lease
	w.Backoff = func(int) time.Duration { return 0 }
	return &testWorker{Worker: w, movies: rm, frames: rf}
}

// createMovie stores a ready movie of n frames with two markers.
func (e *env) createMovie(id string, n int) domain.Movie {
	e.tb.Helper()
	m, err := domain.NewMovie(id, "Movie "+id, n, 25, time.Now())
	if err != nil {
		e.tb.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "tip", Label: "tip", X: 0.5, Y: 0.5}, {ID: "heel", X: 0.2, Y: 0.8}}
	if err := e.movies.Create(context.Background(), m); err != nil {
		e.tb.Fatalf("create movie: %v", err)
	}
	return m
}

// start commits StartTrace as the API does and returns the job message the
// stream processor would enqueue for it.
func (e *env) start(movieID string, u domain.User, from int, now time.Time, lease time.Duration) events.TraceJob {
	e.tb.Helper()
	job := token.New()
	m, err := e.movies.Commit(context.Background(), movieID, domain.StartTrace{JobID: job, User: u, FromFrame: from, Now: now, Duration: lease})
	if err != nil {
		e.tb.Fatalf("start trace: %v", err)
	}
	return events.TraceJob{MovieID: movieID, JobID: job, FromFrame: from, Version: m.Version}
}

func (e *env) get(movieID string) domain.Movie {
	e.tb.Helper()
	m, err := e.movies.Get(context.Background(), movieID)
	if err != nil {
		e.tb.Fatal(err)
	}
	return m
}

// stored returns every stored frame of a movie, through Page.
func (e *env) stored(movieID string) []domain.Frame {
	e.tb.Helper()
	var out []domain.Frame
	from := 0
	for {
		page, next, err := e.frames.Page(context.Background(), movieID, from, dynamo.MaxFramePage)
		if err != nil {
			e.tb.Fatal(err)
		}
		out = append(out, page...)
		if next == nil {
			return out
		}
		from = *next
	}
}

// send enqueues a job message and returns its message ID.
func (e *env) send(job events.TraceJob) string {
	e.tb.Helper()
	body, err := events.EncodeTraceJob(job)
	if err != nil {
		e.tb.Fatal(err)
	}
	return e.sendBody(body)
}

func (e *env) sendBody(body string) string {
	e.tb.Helper()
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
			out = append(out, worker.SQSMessage(m, e.queueARN, "us-east-1"))
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

// logLines returns the JSON log records.
func (e *env) logLines() []map[string]any {
	e.tb.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(e.logs.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			e.tb.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

// checkJobFrames requires frames to be exactly the plan's frames, of job.
func checkJobFrames(tb testing.TB, got []domain.Frame, job string, plan domain.TracePlan) {
	tb.Helper()
	if len(got) != plan.Frames {
		tb.Fatalf("%d frames stored, plan has %d", len(got), plan.Frames)
	}
	for i, f := range got {
		if f.Index != plan.FrameAt(i) || f.JobID != job {
			tb.Fatalf("frame %d: index %d of job %s, want %d of %s", i, f.Index, f.JobID, plan.FrameAt(i), job)
		}
	}
}

// recordingMovies wraps the movie store and records each command's outcome.
type recordingMovies struct {
	worker.Movies
	mu    sync.Mutex
	calls []call
	// fail, when set, can replace a command's result (to inject faults).
	fail func(cmd domain.Command) error
}

type call struct {
	cmd   domain.Command
	err   error
	start time.Time // when it was called
	at    time.Time // when it returned
	row   domain.Movie
}

func (r *recordingMovies) Commit(ctx context.Context, movieID string, cmd domain.Command) (domain.Movie, error) {
	var m domain.Movie
	var err error
	start := time.Now()
	if r.fail != nil {
		err = r.fail(cmd)
	}
	if err == nil {
		m, err = r.Movies.Commit(ctx, movieID, cmd)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{cmd: cmd, err: err, start: start, at: time.Now(), row: m})
	return m, err
}

// succeeded counts the successful commands of type T.
func succeeded[T domain.Command](r *recordingMovies) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if _, ok := c.cmd.(T); ok && c.err == nil {
			n++
		}
	}
	return n
}

// recordingFrames wraps the frame store and records each fenced write.
type recordingFrames struct {
	worker.Frames
	mu     sync.Mutex
	writes []frameWrite
	// before, when set, runs before each write and can fail it.
	before func(n int) error
}

type frameWrite struct {
	puts, deletes int
	err           error
	start, at     time.Time
}

func (r *recordingFrames) WriteFenced(ctx context.Context, movieID string, fence ddbtypes.TransactWriteItem, puts []domain.Frame, deletes []int) error {
	start := time.Now()
	r.mu.Lock()
	n := len(r.writes)
	r.mu.Unlock()
	var err error
	if r.before != nil {
		err = r.before(n)
	}
	if err == nil {
		err = r.Frames.WriteFenced(ctx, movieID, fence, puts, deletes)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, frameWrite{puts: len(puts), deletes: len(deletes), err: err, start: start, at: time.Now()})
	return err
}

func (r *recordingFrames) snapshot() []frameWrite {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]frameWrite(nil), r.writes...)
}

// storeCall is one call a worker made to either store.
type storeCall struct {
	what      string
	err       error
	start, at time.Time
}

// allCalls returns every store call of the worker.
func (tw *testWorker) allCalls() []storeCall {
	var out []storeCall
	tw.movies.mu.Lock()
	for _, c := range tw.movies.calls {
		out = append(out, storeCall{what: fmt.Sprintf("%T", c.cmd), err: c.err, start: c.start, at: c.at})
	}
	tw.movies.mu.Unlock()
	for _, w := range tw.frames.snapshot() {
		err := w.err
		if fenceRefused(err) {
			err = &domain.Error{Code: domain.CodeLeaseLost, Message: "fence refused"}
		}
		out = append(out, storeCall{what: fmt.Sprintf("WriteFenced(%d puts, %d deletes)", w.puts, w.deletes), err: err, start: w.start, at: w.at})
	}
	return out
}

// requireStoppedAtFirstRefusal: exactly one call was refused, and no call
// started after it returned.
func requireStoppedAtFirstRefusal(tb testing.TB, calls []storeCall) storeCall {
	tb.Helper()
	var refused []storeCall
	for _, c := range calls {
		if domain.ErrorCode(c.err) != "" {
			refused = append(refused, c)
		}
	}
	if len(refused) != 1 {
		tb.Fatalf("%d refused calls, want 1: %+v", len(refused), refused)
	}
	for _, c := range calls {
		if c.start.After(refused[0].at) {
			tb.Fatalf("%s was called after the refusal of %s", c.what, refused[0].what)
		}
	}
	return refused[0]
}

// fenceRefused reports whether a fenced write failed on its fence (the
// first action's condition).
func fenceRefused(err error) bool {
	var tc *ddbtypes.TransactionCanceledException
	return errors.As(err, &tc) && len(tc.CancellationReasons) > 0 && aws.ToString(tc.CancellationReasons[0].Code) == "ConditionalCheckFailed"
}

// putsWritten returns the frames the worker's successful writes stored.
func (tw *testWorker) putsWritten() int {
	n := 0
	for _, w := range tw.frames.snapshot() {
		if w.err == nil {
			n += w.puts
		}
	}
	return n
}

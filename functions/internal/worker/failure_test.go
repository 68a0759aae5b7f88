package worker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// TestInjectedFailureEndsTracingFailedWithAuditItem runs the whole chain on
// the emulators: the API's StartTrace commit, the stream processor on the
// table's real stream (job message + started audit item), the worker on the
// message received from the SQS emulator with an injected failure at frame
// 120, and the stream processor again, which projects movie.tracing.failed
// with the sanitized summary.
func TestInjectedFailureEndsTracingFailedWithAuditItem(t *testing.T) {
	e := newEnv(t)
	e.newQueue(60 * time.Second)
	ctx := context.Background()
	e.createMovie("m7", 300)
	arn, err := streamproc.StreamARN(ctx, e.ddb, e.tables.Movies)
	if err != nil {
		t.Fatal(err)
	}
	reader := streamproc.NewStreamReader(testenv.Streams(t), arn)
	sp, err := streamproc.New(streamproc.Options{Queue: e.sqs, Audit: e.ddb, QueueURL: e.queueURL, AuditTable: e.tables.Audit, Log: logging.New(e.logs, slog.LevelInfo)})
	if err != nil {
		t.Fatal(err)
	}
	stream := func() {
		t.Helper()
		recs, err := reader.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := sp.Handle(ctx, lambdaevents.DynamoDBEvent{Records: recs})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("stream processor: %+v %v", resp, err)
		}
	}

	job := e.start("m7", alice, 0, time.Now(), lease)
	stream()
	msgs := e.receive(1, 10*time.Second)
	if len(msgs) != 1 {
		t.Fatalf("the stream processor enqueued %d messages", len(msgs))
	}
	if got, err := events.DecodeTraceJob(msgs[0].Body); err != nil || got != job {
		t.Fatalf("enqueued %+v (%v), want %+v", got, err, job)
	}

	tw := e.newWorker(tracer.NewSynthetic(tracer.WithFailureAt(120)), lease)
	resp, err := tw.Handle(ctx, lambdaevents.SQSEvent{Records: msgs})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("worker: %+v %v", resp, err)
	}
	e.deleteMessages(msgs, resp)

	const summary = "The tracer failed at frame 120 (an injected test failure)."
	m := e.get("m7")
	if m.Status != domain.StatusFailed || m.Lease != nil || m.LastJob == nil || m.LastJob.JobID != job.JobID ||
		m.LastJob.Status != domain.StatusFailed || m.LastJob.FailureSummary != summary || m.LastJob.Frames != 120 ||
		m.CleanBefore != 0 {
		t.Fatalf("row %+v, last job %+v", m, m.LastJob)
	}
	if v := m.View(time.Now()); v.Status != domain.StatusFailed || v.Holder != nil {
		t.Fatalf("view %+v", v)
	}

	stream()
	audit := e.auditItems("m7")
	failed, ok := audit[job.JobID+"#"+string(events.TracingFailed)]
	if !ok || len(audit) != 2 || failed.Type != "movie.tracing.failed" || failed.Summary != summary ||
		failed.UserName != alice.Name || failed.Version != m.Version {
		t.Fatalf("audit %+v", audit)
	}
	if _, ok := audit[job.JobID+"#"+string(events.TracingStarted)]; !ok {
		t.Fatalf("no started item: %+v", audit)
	}
	if more := e.receive(1, time.Second); len(more) != 0 {
		t.Fatalf("the failure enqueued %+v", more)
	}
	// The full cause is in the log, at error level.
	found := false
	for _, rec := range e.logLines() {
		if rec["msg"] == "job failed" && rec["level"] == "ERROR" && rec["jobId"] == job.JobID &&
			strings.Contains(fmt.Sprint(rec["error"]), "injected failure at frame 120") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no error record with the cause:\n%s", e.logs.String())
	}
}

const hostile = "open /var/task/models/secret.key: password=hunter2 token=abc AKIAABCDEFGHIJKLMNOP https://user:pw@internal.invalid/x"

// TestUnsafeFailuresBecomeSafeSummaries: panics, plain errors, misbehaving
// tracers and hostile "safe" summaries all end in tracing_failed with a
// short summary free of paths, secrets and stacks; the logs get the detail.
func TestUnsafeFailuresBecomeSafeSummaries(t *testing.T) {
	at := func(n int, then func(f domain.Frame, emit func(domain.Frame) error) error) tracer.Tracer {
		return at(n, func(_ context.Context, f domain.Frame, emit func(domain.Frame) error) error { return then(f, emit) })
	}
	generic := func(job string) string {
		return "Tracing failed because of an internal error (reference " + job[:8] + ")."
	}
	cases := []struct {
		name    string
		tr      tracer.Tracer
		summary func(job string) string
		log     string // must appear in the error log record
	}{
		{"panic", at(50, func(domain.Frame, func(domain.Frame) error) error { panic(hostile) }), generic, "goroutine"},
		{"runtime error", at(50, func(f domain.Frame, _ func(domain.Frame) error) error {
			var none []int
			return fmt.Errorf("unreachable %d", none[f.Index])
		}), generic, "index out of range [50]"},
		{"plain error", at(50, func(domain.Frame, func(domain.Frame) error) error { return errors.New(hostile) }), generic, "hunter2"},
		{"hostile safe summary", at(50, func(domain.Frame, func(domain.Frame) error) error {
			return tracer.Safe("Model load failed: "+hostile, errors.New("cause"))
		}), func(string) string { return domain.SanitizeSummary("Model load failed: " + hostile) }, "cause"},
		{"frame out of order", at(50, func(f domain.Frame, emit func(domain.Frame) error) error {
			f.Index++
			return emit(f)
		}), generic, "where the plan has frame 50"},
		{"invalid frame", at(50, func(f domain.Frame, emit func(domain.Frame) error) error {
			f.Points[0].X = 7
			return emit(f)
		}), generic, "invalid frame 50"},
		{"one frame too many", at(299, func(f domain.Frame, emit func(domain.Frame) error) error {
			if err := emit(f); err != nil {
				return err
			}
			f.Index++
			return emit(f)
		}), generic, "frame 300 beyond the plan's 300 frames"},
		{"returns early", at(50, func(domain.Frame, func(domain.Frame) error) error { return errStopEarly }), generic, "50 of 300"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newMemEnv(t)
			e.createMovie("m8", 300)
			job := e.start("m8", alice, 0, e.now(), lease)
			tr := c.tr
			if c.name == "returns early" {
				tr = earlyReturn{tr}
			}
			out := e.newWorker(tr, lease).Run(context.Background(), job)
			want := c.summary(job.JobID)
			if out.Result != worker.ResultFailed || out.Summary != want {
				t.Fatalf("outcome %+v, want summary %q", out, want)
			}
			m := e.get("m8")
			if m.Status != domain.StatusFailed || m.LastJob.FailureSummary != want || m.Lease != nil {
				t.Fatalf("row %+v / %+v", m, m.LastJob)
			}
			for _, f := range e.stored("m8") {
				if f.Index >= 300 {
					t.Fatalf("frame %d beyond the plan was stored", f.Index)
				}
			}
			for _, bad := range []string{"hunter2", "/var/task", "AKIA", "internal.invalid", "goroutine", "token=", "\n"} {
				if strings.Contains(want, bad) {
					t.Fatalf("summary %q contains %q", want, bad)
				}
			}
			logged := false
			for _, rec := range e.logLines() {
				if rec["msg"] == "job failed" && strings.Contains(fmt.Sprint(rec), c.log) {
					logged = true
				}
			}
			if !logged {
				t.Fatalf("no error record containing %q:\n%s", c.log, e.logs.String())
			}
		})
	}
}

var errStopEarly = errors.New("stop early")

// earlyReturn turns errStopEarly into a nil return: a tracer that returns
// success without emitting every planned frame.
type earlyReturn struct{ tracer.Tracer }

func (t earlyReturn) Trace(ctx context.Context, m domain.Movie, p domain.TracePlan, emit func(domain.Frame) error) error {
	if err := t.Tracer.Trace(ctx, m, p, emit); !errors.Is(err, errStopEarly) {
		return err
	}
	return nil
}

// TestDeferredMessageIsRequeued: a job too close to the invocation's
// deadline to start is reported failed unclaimed and, through the real SQS
// adapter, made visible again at once (the queue's visibility timeout is
// 60 s): the next invocation traces it.
func TestDeferredMessageIsRequeued(t *testing.T) {
	e := newEnv(t)
	e.newQueue(60 * time.Second)
	e.createMovie("m9", 300)
	e.send(e.start("m9", alice, 0, time.Now(), lease))
	msgs := e.receive(1, 10*time.Second)
	if len(msgs) != 1 {
		t.Fatalf("received %d", len(msgs))
	}
	tw := e.newWorker(tracer.NewSynthetic(), lease, func(o *worker.Options) {
		o.Queue, o.RequeueDelay = e.jobs(), func(int) time.Duration { return 0 }
	})
	ctx, cancel := context.WithTimeout(context.Background(), worker.DefaultStartReserve/2)
	defer cancel()
	resp, err := tw.Handle(ctx, lambdaevents.SQSEvent{Records: msgs})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != msgs[0].MessageId {
		t.Fatalf("%+v %v", resp, err)
	}
	if m := e.get("m9"); m.Lease == nil || m.Lease.Claimed {
		t.Fatalf("the deferred job was touched: %+v", m.Lease)
	}
	e.deleteMessages(msgs, resp)
	again := e.receive(1, 5*time.Second)
	if len(again) != 1 || again[0].MessageId != msgs[0].MessageId || again[0].Attributes["ApproximateReceiveCount"] != "2" {
		t.Fatalf("requeued %+v", again)
	}
	if resp, err := tw.Handle(context.Background(), lambdaevents.SQSEvent{Records: again}); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v %v", resp, err)
	}
	if m := e.get("m9"); m.Status != domain.StatusTraced {
		t.Fatalf("%+v", m)
	}
}

// TestClaimTransportErrorIsRedelivered: a claim that fails in transport
// leaves the message for redelivery, and the redelivery claims it.
func TestClaimTransportErrorIsRedelivered(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("m10", 300)
	job := e.start("m10", alice, 0, e.now(), lease)
	body, _ := events.EncodeTraceJob(job)
	msg := lambdaevents.SQSMessage{MessageId: "msg-1", Body: body, Attributes: map[string]string{"ApproximateReceiveCount": "1"}}
	tw := e.newWorker(tracer.NewSynthetic(), lease)
	tw.movies.fail = func(cmd domain.Command) error {
		if _, ok := cmd.(domain.ClaimSegment); ok {
			return errors.New("dial tcp 127.0.0.1:1: connection reset by peer")
		}
		return nil
	}
	resp, _ := tw.Handle(context.Background(), lambdaevents.SQSEvent{Records: []lambdaevents.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "msg-1" {
		t.Fatalf("%+v", resp)
	}
	if m := e.get("m10"); m.Lease.Claimed || len(tw.frames.snapshot()) != 0 {
		t.Fatal("a failed claim had effects")
	}
	tw.movies.fail = nil
	resp, _ = tw.Handle(context.Background(), lambdaevents.SQSEvent{Records: []lambdaevents.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 0 || e.get("m10").Status != domain.StatusTraced {
		t.Fatalf("redelivery: %+v %+v", resp, e.get("m10"))
	}
}

// TestTransactionConflictsAreRetried: DynamoDB's transaction conflicts
// (which DynamoDB Local never produces, so they are injected) are retried
// and do not count as a lost lease; a conflict that persists fails the job.
func TestTransactionConflictsAreRetried(t *testing.T) {
	conflict := func() error { return fmt.Errorf("fenced write: %w", domain.ErrConflict) }
	t.Run("transient", func(t *testing.T) {
		e := newMemEnv(t)
		e.createMovie("m11", 300)
		job := e.start("m11", alice, 0, e.now(), lease)
		tw := e.newWorker(tracer.NewSynthetic(), lease)
		tw.frames.before = func(n int) error {
			if n < 2 {
				return conflict()
			}
			return nil
		}
		begins := 0
		tw.movies.fail = func(cmd domain.Command) error {
			if _, ok := cmd.(domain.BeginTrace); ok && begins == 0 {
				begins++
				return conflict()
			}
			return nil
		}
		if out := tw.Run(context.Background(), job); out.Result != worker.ResultTraced {
			t.Fatalf("%+v", out)
		}
		checkJobFrames(t, e.stored("m11"), job.JobID, planOf(t, tw))
		if w := tw.frames.snapshot(); len(w) != 6 || w[0].err == nil || w[1].err == nil {
			t.Fatalf("writes %+v", w)
		}
	})
	t.Run("persistent on the row", func(t *testing.T) {
		// A movie-row commit (here BeginTrace) is retried as often as a
		// frame write, then fails the job.
		e := newMemEnv(t)
		e.createMovie("m12r", 300)
		job := e.start("m12r", alice, 0, e.now(), lease)
		tw := e.newWorker(tracer.NewSynthetic(), lease)
		tw.movies.fail = func(cmd domain.Command) error {
			if _, ok := cmd.(domain.BeginTrace); ok {
				return conflict()
			}
			return nil
		}
		if out := tw.Run(context.Background(), job); out.Result != worker.ResultFailed {
			t.Fatalf("%+v", out)
		}
		begins := 0
		for _, c := range tw.movies.snapshot() {
			if _, ok := c.cmd.(domain.BeginTrace); ok {
				begins++
			}
		}
		if begins != worker.DefaultConflictRetries+1 || len(tw.frames.snapshot()) != 0 {
			t.Fatalf("%d BeginTrace attempts, %d frame writes", begins, len(tw.frames.snapshot()))
		}
	})
	t.Run("persistent", func(t *testing.T) {
		e := newMemEnv(t)
		e.createMovie("m12", 300)
		job := e.start("m12", alice, 0, e.now(), lease)
		tw := e.newWorker(tracer.NewSynthetic(), lease)
		tw.frames.before = func(int) error { return conflict() }
		out := tw.Run(context.Background(), job)
		if out.Result != worker.ResultFailed || !strings.HasPrefix(out.Summary, "Tracing failed because of an internal error") {
			t.Fatalf("%+v", out)
		}
		if n := len(tw.frames.snapshot()); n != worker.DefaultConflictRetries+1 {
			t.Fatalf("%d attempts", n)
		}
	})
}

// TestUndecodableMessagesAreDropped: a body that is not a trace job is
// logged (redacted, bounded) and reported done, never redelivered.
func TestUndecodableMessagesAreDropped(t *testing.T) {
	e := newMemEnv(t)
	tw := e.newWorker(tracer.NewSynthetic(), lease)
	const id = "0123456789abcdef0123456789abcdef"
	bodies := []string{
		"not json",
		`{"movieId":"m","jobId":"` + id + `","fromFrame":0,"version":1,"extra":true}`,
		`{"movieId":"m","jobId":"` + id + `","fromFrame":-1,"version":1}`,
		strings.Repeat("é", 3000),
	}
	var msgs []lambdaevents.SQSMessage
	for i, b := range bodies {
		msgs = append(msgs, lambdaevents.SQSMessage{MessageId: fmt.Sprint("m-", i), Body: b})
	}
	resp, err := tw.Handle(context.Background(), lambdaevents.SQSEvent{Records: msgs})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v %v", resp, err)
	}
	if n := countLogs(e, "undecodable trace-job message dropped"); n != len(bodies) {
		t.Fatalf("%d logged", n)
	}
	logs := e.logs.String()
	if strings.Contains(logs, id) {
		t.Fatal("an ID-shaped string was logged")
	}
	for _, rec := range e.logLines() {
		if b, _ := rec["body"].(string); len(b) > 1030 {
			t.Fatalf("logged %d bytes of body", len(b))
		}
	}
	if len(tw.movies.snapshot()) != 0 {
		t.Fatal("an undecodable message touched the movies table")
	}
}

// TestHandlerSurvivesAPanicOutsideTheJob: a panic outside the traced part
// (here: in the store during the claim) neither kills the process nor fails
// the rest of the batch; that message is left for redelivery.
func TestHandlerSurvivesAPanicOutsideTheJob(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("m13", 300)
	e.createMovie("m14", 300)
	bad, good := e.start("m13", alice, 0, e.now(), lease), e.start("m14", alice, 0, e.now(), lease)
	tw := e.newWorker(tracer.NewSynthetic(), lease)
	tw.movies.fail = func(cmd domain.Command) error {
		if c, ok := cmd.(domain.ClaimSegment); ok && c.JobID == bad.JobID {
			panic("store bug")
		}
		return nil
	}
	var msgs []lambdaevents.SQSMessage
	for i, j := range []events.TraceJob{bad, good} {
		body, _ := events.EncodeTraceJob(j)
		msgs = append(msgs, lambdaevents.SQSMessage{MessageId: fmt.Sprint("msg-", i), Body: body})
	}
	resp, err := tw.Handle(context.Background(), lambdaevents.SQSEvent{Records: msgs})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "msg-0" {
		t.Fatalf("%+v %v", resp, err)
	}
	if e.get("m14").Status != domain.StatusTraced {
		t.Fatal("the rest of the batch did not run")
	}
	if n := countLogs(e, "worker panicked; message left for redelivery"); n != 1 {
		t.Fatalf("%d panic records", n)
	}
}

// TestInvalidWriteIsNotALostLease: a fenced write the store refuses as
// invalid input (the store's checks may be stricter than the worker's) is an
// internal error that fails the job visibly, not a lost lease that would
// leave it to go stale.
func TestInvalidWriteIsNotALostLease(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("m13", 300)
	job := e.start("m13", alice, 0, e.now(), lease)
	tw := e.newWorker(tracer.NewSynthetic(), lease)
	tw.frames.before = func(int) error { return domain.Invalid("frame", "refused by the store") }
	out := tw.Run(context.Background(), job)
	if out.Result != worker.ResultFailed || !strings.HasPrefix(out.Summary, "Tracing failed because of an internal error") {
		t.Fatalf("%+v", out)
	}
	if m := e.get("m13"); m.Status != domain.StatusFailed || m.Lease != nil {
		t.Fatalf("row %+v", m)
	}
}

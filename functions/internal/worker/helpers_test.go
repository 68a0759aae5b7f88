package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

var (
	alice = domain.User{ID: "u-alice", Name: "Alice"}
	bob   = domain.User{ID: "u-bob", Name: "Bob"}
)

// memEpoch is where the fake clocks start: far from the real time, so that
// a context deadline set on the fake clock never fires by itself.
var memEpoch = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// testStore is what a test needs of the store under the worker: its ports
// and a way to set up and inspect rows and frames.
type testStore interface {
	worker.Movies
	worker.Frames
	create(tb testing.TB, m domain.Movie)
	get(tb testing.TB, id string) domain.Movie
	stored(tb testing.TB, id string) []domain.Frame
}

// env is one test's world: a store (in memory, or DynamoDB Local through
// the real adapter), a clock (fake, or real) and the worker's logs.
type env struct {
	tb    testing.TB
	store testStore
	clock worker.Clock
	fake  *testingclock.FakeClock // nil unless the clock is fake
	logs  *testenv.LogBuffer
	seq   atomic.Int64 // orders the recorded store calls
	*emulators
}

// newMemEnv is the in-memory store on a fake clock: the worker's logic
// tests.
func newMemEnv(tb testing.TB) *env {
	fake := testingclock.NewFakeClock(memEpoch)
	return &env{tb: tb, store: newMemStore(), clock: fake, fake: fake, logs: &testenv.LogBuffer{}}
}

func (e *env) now() time.Time { return e.clock.Now() }

// testWorker is a worker whose store calls are recorded.
type testWorker struct {
	*worker.Worker
	movies *recordingMovies
	frames *recordingFrames
}

// newWorker returns a worker on the env's store and clock, logging JSON
// into e.logs, with no backoff pauses; tune adjusts the options.
func (e *env) newWorker(tr tracer.Tracer, lease time.Duration, tune ...func(*worker.Options)) *testWorker {
	e.tb.Helper()
	rm, rf := &recordingMovies{Movies: e.store, seq: &e.seq}, &recordingFrames{Frames: e.store, seq: &e.seq}
	o := worker.Options{
		Movies: rm, Frames: rf, Tracer: tr, Log: logging.New(e.logs, slog.LevelDebug), Clock: e.clock,
		LeaseDuration: lease, Backoff: func(int) time.Duration { return 0 },
	}
	for _, t := range tune {
		t(&o)
	}
	w, err := worker.New(o)
	if err != nil {
		e.tb.Fatal(err)
	}
	return &testWorker{Worker: w, movies: rm, frames: rf}
}

// createMovie stores a ready movie of n frames with two markers.
func (e *env) createMovie(id string, n int) domain.Movie {
	e.tb.Helper()
	m, err := domain.NewMovie(id, "Movie "+id, n, 25, e.now())
	if err != nil {
		e.tb.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "tip", Label: "tip", X: 0.5, Y: 0.5}, {ID: "heel", X: 0.2, Y: 0.8}}
	e.store.create(e.tb, m)
	return m
}

// start commits StartTrace as the API does and returns the job message the
// stream processor would enqueue for it.
func (e *env) start(movieID string, u domain.User, from int, now time.Time, lease time.Duration) events.TraceJob {
	e.tb.Helper()
	job := token.New()
	m, err := e.store.Commit(context.Background(), movieID, domain.StartTrace{JobID: job, User: u, FromFrame: from, Now: now, Duration: lease})
	if err != nil {
		e.tb.Fatalf("start trace: %v", err)
	}
	return events.TraceJob{MovieID: movieID, JobID: job, FromFrame: from, Version: m.Version}
}

func (e *env) get(movieID string) domain.Movie {
	e.tb.Helper()
	return e.store.get(e.tb, movieID)
}

func (e *env) stored(movieID string) []domain.Frame {
	e.tb.Helper()
	return e.store.stored(e.tb, movieID)
}

// message is the Lambda record of a job message.
func message(tb testing.TB, id string, job events.TraceJob) lambdaMessage {
	tb.Helper()
	body, err := events.EncodeTraceJob(job)
	if err != nil {
		tb.Fatal(err)
	}
	return lambdaMessage{MessageId: id, Body: body, ReceiptHandle: "rh-" + id, Attributes: map[string]string{"ApproximateReceiveCount": "1"}}
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

func countLogs(e *env, msg string) int {
	n := 0
	for _, rec := range e.logLines() {
		if rec["msg"] == msg {
			n++
		}
	}
	return n
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
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

// recordingMovies wraps the Movies port and records each command's outcome.
type recordingMovies struct {
	worker.Movies
	seq   *atomic.Int64
	mu    sync.Mutex
	calls []call
	// fail, when set, can replace a command's result (to inject faults).
	fail func(cmd domain.Command) error
}

type call struct {
	cmd       domain.Command
	err       error
	start, at int64 // sequence numbers when it was called and returned
	row       domain.Movie
}

func (r *recordingMovies) Commit(ctx context.Context, movieID string, cmd domain.Command) (domain.Movie, error) {
	var m domain.Movie
	var err error
	start := r.seq.Add(1)
	if r.fail != nil {
		err = r.fail(cmd)
	}
	if err == nil {
		m, err = r.Movies.Commit(ctx, movieID, cmd)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{cmd: cmd, err: err, start: start, at: r.seq.Add(1), row: m})
	return m, err
}

func (r *recordingMovies) snapshot() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.calls...)
}

// succeeded counts the successful commands of type T.
func succeeded[T domain.Command](r *recordingMovies) int {
	n := 0
	for _, c := range r.snapshot() {
		if _, ok := c.cmd.(T); ok && c.err == nil {
			n++
		}
	}
	return n
}

// recordingFrames wraps the Frames port and records each fenced write.
type recordingFrames struct {
	worker.Frames
	seq    *atomic.Int64
	mu     sync.Mutex
	writes []frameWrite
	// before, when set, runs before each write and can fail it.
	before func(n int) error
}

type frameWrite struct {
	puts, deletes int
	err           error
	start, at     int64
}

func (r *recordingFrames) WriteFenced(ctx context.Context, movieID string, fence domain.JobFence, puts []domain.Frame, deletes []int) error {
	start := r.seq.Add(1)
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
	r.writes = append(r.writes, frameWrite{puts: len(puts), deletes: len(deletes), err: err, start: start, at: r.seq.Add(1)})
	return err
}

func (r *recordingFrames) snapshot() []frameWrite {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]frameWrite(nil), r.writes...)
}

// storeCall is one call a worker made to either port.
type storeCall struct {
	what      string
	err       error
	start, at int64
}

// allCalls returns every store call of the worker.
func (tw *testWorker) allCalls() []storeCall {
	var out []storeCall
	for _, c := range tw.movies.snapshot() {
		out = append(out, storeCall{what: fmt.Sprintf("%T", c.cmd), err: c.err, start: c.start, at: c.at})
	}
	for _, w := range tw.frames.snapshot() {
		out = append(out, storeCall{what: fmt.Sprintf("WriteFenced(%d puts, %d deletes)", w.puts, w.deletes), err: w.err, start: w.start, at: w.at})
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
		if c.start > refused[0].at {
			tb.Fatalf("%s was called after the refusal of %s", c.what, refused[0].what)
		}
	}
	return refused[0]
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

// claimedRow is the row the worker's successful claim returned.
func (tw *testWorker) claimedRow(tb testing.TB) domain.Movie {
	tb.Helper()
	for _, c := range tw.movies.snapshot() {
		if _, ok := c.cmd.(domain.ClaimSegment); ok && c.err == nil {
			return c.row
		}
	}
	tb.Fatal("no successful claim")
	return domain.Movie{}
}

func planOf(tb testing.TB, tw *testWorker) domain.TracePlan {
	tb.Helper()
	m := tw.claimedRow(tb)
	return domain.PlanTrace(m, *m.Lease)
}

// realClock is the production clock, for the tests on the emulators.
var realClock worker.Clock = clock.RealClock{}

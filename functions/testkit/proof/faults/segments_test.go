package faults

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	awsretry "github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/queue"
	"github.com/movietrace/tracinglocks/functions/internal/sweeper"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
	"github.com/movietrace/tracinglocks/functions/testkit/proof"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	ftransport "github.com/movietrace/tracinglocks/functions/testkit/testenv/faults"
	"github.com/movietrace/tracinglocks/schema"
)

// segmentCounts are what TestSegmentedTracesUnderFaults measured over all
// runs; the first four must be 0.
type segmentCounts struct {
	orphanedLeases, unterminatedJobs, mixedFrames, auditMismatches, mixedMarkerSets int
	runs, backlogged, killedSegments, handoffs, invocations, swept, markerChanges   int
}

// TestSegmentedTracesUnderFaults runs whole traces on DynamoDB Local and the
// SQS emulator with invocations of 1.5 s (3 s for the final trace) at 10 ms
// a frame (so every trace
// spans many invocations and continuations), jobs whose message waited in
// the queue past their lease (a backlog), workers killed mid-segment, every
// message (first or continuation) delivered 1-2 times in random order, and
// the sweeper run once the killed jobs' leases are stale. After each run:
// no orphaned lease, every started job has a terminal event (completed,
// failed or abandoned), the final trace's frames are the whole plan with no
// other job's frame at or after its start, and exactly one audit item per
// derived transition. SEGMENT_RUNS sets the runs (default 1; make proof
// sets more); with PROOF_COUNTS set, the counts are appended.
func TestSegmentedTracesUnderFaults(t *testing.T) {
	runs := envInt("SEGMENT_RUNS", 1)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FAULTS_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("FAULTS_SEED=%d SEGMENT_RUNS=%d", seed, runs)
	fc := &faultCounts{}
	e := newEnv(t, fc)
	// The workers' and the stream handler's logs: the tail is printed if a
	// run fails (a worker's internal error is only explained there).
	logs := &testenv.LogBuffer{}
	e.log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	t.Cleanup(func() {
		if t.Failed() {
			lines := strings.Split(logs.String(), "\n")
			t.Logf("last log lines:\n%s", strings.Join(lines[max(len(lines)-60, 0):], "\n"))
		}
	})
	lost := newLossyStores(t, e)
	c := &segmentCounts{}
	for run := 0; run < runs; run++ {
		rng := rand.New(rand.NewPCG(seed, uint64(1000+run)))
		e.segmentRun(rng, fmt.Sprintf("s%d", run), lost, c)
		if t.Failed() {
			t.Fatalf("run %d failed (FAULTS_SEED=%d)", run, seed)
		}
	}
	poisonLost := e.poisonLost()
	lostResponses := len(lost.ft.Injected())
	t.Logf("%+v poison records %d (never set aside %d), lost responses %d", *c, fc.poison.Load(), poisonLost, lostResponses)
	if c.orphanedLeases+c.unterminatedJobs+c.mixedFrames+c.auditMismatches+c.mixedMarkerSets+poisonLost != 0 {
		t.Fatalf("violations: %+v, poison records never set aside %d", *c, poisonLost)
	}
	if err := proof.AppendCounts("segment_runs", c.runs, "orphaned_leases", c.orphanedLeases, "unterminated_jobs", c.unterminatedJobs,
		"mixed_frames", c.mixedFrames, "mixed_marker_sets", c.mixedMarkerSets, "audit_mismatches", c.auditMismatches, "handoffs", c.handoffs,
		"segment_invocations", c.invocations, "killed_segments", c.killedSegments, "backlogged_jobs", c.backlogged,
		"swept", c.swept, "marker_changes", c.markerChanges, "lost_responses", lostResponses,
		"poison_records", fc.poison.Load(), "poison_lost", poisonLost); err != nil {
		t.Fatal(err)
	}
}

const segLease = 2 * time.Second

// invokeSegment hands one message to a fresh worker whose invocation lasts
// budget (real time; the tracer takes 10 ms a frame), killed at a random
// frame if kill is set. The workers' clocks are not skewed here: a Lambda's
// deadline and its clock are the same machine's (the skew runs are in
// TestFaultsEndToEnd).
func (e *env) invokeSegment(rng *rand.Rand, msg lambdaevents.SQSMessage, kill bool, leaseFor, budget time.Duration, pl *plans, lost *lossyStores, c *segmentCounts) worker.Outcome {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	synth := tracer.NewSynthetic(tracer.WithDelay(10 * time.Millisecond))
	killAfter := -1
	if kill {
		killAfter = rng.IntN(30)
	}
	tr := tracer.Func(func(tctx context.Context, m domain.Movie, p domain.TracePlan, emit func(domain.Frame) error) error {
		job, _ := events.DecodeTraceJob(msg.Body)
		if job.Segment == 0 {
			pl.set(job.JobID, p)
		}
		n := 0
		return synth.Trace(tctx, m, p, func(f domain.Frame) error {
			if n == killAfter {
				c.killedSegments++
				cancel()
			}
			n++
			return emit(f)
		})
	})
	// The worker's writes go through a transport that, on a random
	// fraction of them, lets DynamoDB commit and then loses the answer (the
	// SDK retries; the replay must be recognised).
	lost.arm(rng)
	store := dynamo.NewJobStore(lost.movies, lost.frames)
	jobs, err := queue.NewJobs(e.sqs, e.queueURL)
	if err != nil {
		e.t.Fatal(err)
	}
	stop, reserve := worker.MarginsFor(budget)
	w, err := worker.New(worker.Options{
		Movies: store, Frames: store, Tracer: tr, Queue: jobs, Log: e.log,
		LeaseDuration: leaseFor, Backoff: func(int) time.Duration { return 0 },
		StopMargin: stop, StartReserve: reserve,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	c.invocations++
	out := w.HandleMessage(ctx, msg)
	if os.Getenv("SEGMENT_DEBUG") != "" {
		job, _ := events.DecodeTraceJob(msg.Body)
		e.t.Logf("%s seg %d: %s %d %v", job.JobID[:6], job.Segment, out.Result, out.FramesWritten, out.Err)
	}
	if out.Result == worker.ResultHandedOff {
		c.handoffs++
	}
	return out
}

// drain delivers every queued message (1-2 copies each, shuffled) and the
// continuations they send, until the queue stays empty.
func (e *env) drain(rng *rand.Rand, movieID string, kills bool, budget time.Duration, leaseFor map[string]time.Duration, pl *plans, lost *lossyStores, c *segmentCounts) {
	var deferred []lambdaevents.SQSMessage
	for round := 0; ; round++ {
		if round > 2000 {
			e.t.Fatal("the queue never drained")
		}
		e.pumpStream(rng)
		msgs := append(e.receive(), deferred...)
		deferred = nil
		if len(msgs) == 0 {
			// Done once nothing is queued and no job is running or waiting
			// for its message (the stream may lag behind the row).
			row, err := e.movies.Get(context.Background(), movieID)
			if err != nil {
				e.t.Fatal(err)
			}
			if row.LiveLease(time.Now().Add(maxSkew)) == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		var pool []lambdaevents.SQSMessage
		for _, m := range msgs {
			pool = append(pool, m)
			if rng.IntN(3) == 0 {
				pool = append(pool, m)
			}
		}
		rng.Shuffle(len(pool), func(a, b int) { pool[a], pool[b] = pool[b], pool[a] })
		for _, m := range pool {
			job, _ := events.DecodeTraceJob(m.Body)
			d, ok := leaseFor[job.JobID]
			if !ok {
				d = segLease
			}
			// A message left for redelivery comes back (Lambda's requeue).
			if out := e.invokeSegment(rng, m, kills && rng.IntN(3) == 0, d, budget, pl, lost, c); out.Redeliver() {
				deferred = append(deferred, m)
			}
		}
	}
}

func (e *env) segmentRun(rng *rand.Rand, movieID string, lost *lossyStores, c *segmentCounts) {
	t := e.t
	ctx := context.Background()
	c.runs++
	n := 150 + rng.IntN(150)
	m, err := domain.NewMovie(movieID, "Movie "+movieID, n, 25, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "tip", Label: "tip", X: 0.5, Y: 0.5}}
	if err := e.movies.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	pl := &plans{m: map[string]domain.TracePlan{}}
	started := map[string]bool{}
	leases := map[string]time.Duration{}
	for j := 0; j < 2+rng.IntN(2); j++ {
		job := e.startTrace(rng, movieID, rng.IntN(n/4), segLease)
		started[job] = true
		if rng.IntN(3) == 0 {
			// A backlog: the message is handled only after the job's lease
			// went stale for every worker's clock.
			e.pumpStream(rng)
			e.waitNoLiveLease(movieID)
			c.backlogged++
		}
		e.drain(rng, movieID, true, 1500*time.Millisecond, leases, pl, lost, c)
	}
	// Killed jobs' leases go stale; the sweeper ends them on the row.
	e.waitNoLiveLease(movieID)
	sw, err := sweeper.New(sweeper.Options{Movies: dynamo.SweepStore{MovieStore: e.movies}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := sw.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.swept += rep.Finalized
	e.pumpStream(rng)
	e.countTerminal(movieID, started, c)

	// Sometimes the markers change first: no frame traced for the old set
	// may then remain among the final trace's results.
	if rng.IntN(2) == 0 {
		e.changeMarkers(movieID)
		c.markerChanges++
	}
	// The final trace: no kills, still many invocations.
	final := e.startTrace(rng, movieID, rng.IntN(n/4), longLease)
	started[final] = true
	leases[final] = longLease
	e.drain(rng, movieID, false, 3*time.Second, leases, pl, lost, c)
	e.pumpStream(rng)

	row, err := e.movies.Get(ctx, movieID)
	if err != nil {
		t.Fatal(err)
	}
	if row.Lease != nil && !row.Lease.LiveAt(time.Now()) {
		c.orphanedLeases++
	}
	if row.Status != domain.StatusTraced || row.LastJob == nil || row.LastJob.JobID != final {
		t.Fatalf("%s: the final trace did not complete: %s %+v", movieID, row.Status, row.LastJob)
	}
	e.countTerminal(movieID, started, c)
	before := len(failures(e))
	e.checkAudit(movieID, started)
	c.auditMismatches += len(failures(e)) - before
	e.countMixed(movieID, final, row, pl, c)
}

// failures is a stand-in for the number of errors checkAudit reported: it
// reports through t.Errorf, which fails the test directly.
func failures(e *env) []struct{} {
	if e.t.Failed() {
		return make([]struct{}, 1)
	}
	return nil
}

// waitNoLiveLease waits (bounded) until the movie has no live lease.
func (e *env) waitNoLiveLease(movieID string) {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		row, err := e.movies.Get(context.Background(), movieID)
		if err != nil {
			e.t.Fatal(err)
		}
		if row.LiveLease(time.Now().Add(-2*maxSkew)) == nil {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: the lease never went stale: %+v", movieID, row.Lease)
		}
	}
}

// countTerminal counts started jobs with no terminal event (completed,
// failed, abandoned) in the stream so far, the current live job excepted.
func (e *env) countTerminal(movieID string, started map[string]bool, c *segmentCounts) {
	ended := map[string]bool{}
	for _, r := range e.records {
		ch, err := schema.DecodeRecord(r)
		if err != nil {
			e.t.Fatal(err)
		}
		if ch.New == nil || ch.New.ID != movieID {
			continue
		}
		for _, ev := range events.Derive(ch.Old, ch.New) {
			if ev.Type != events.TracingStarted {
				ended[ev.JobID] = true
			}
		}
	}
	row, err := e.movies.Get(context.Background(), movieID)
	if err != nil {
		e.t.Fatal(err)
	}
	for job := range started {
		if !ended[job] && (row.Lease == nil || row.Lease.ID != job || !row.Lease.LiveAt(time.Now())) {
			c.unterminatedJobs++
			e.t.Errorf("%s: job %s started and never ended", movieID, job)
		}
	}
}

// countMixed: the final trace's frames are exactly its plan from its start,
// nothing of another job at or after it, and no hole below it.
func (e *env) countMixed(movieID, final string, row domain.Movie, pl *plans, c *segmentCounts) {
	fp, ok := pl.m[final]
	if !ok {
		e.t.Fatalf("%s: the final job never traced", movieID)
	}
	stored := map[int]domain.Frame{}
	for from := 0; ; {
		page, next, err := e.frames.Page(context.Background(), movieID, from, dynamo.MaxFramePage)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, f := range page {
			stored[f.Index] = f
		}
		if next == nil {
			break
		}
		from = *next
	}
	for i := 0; i < fp.Frames; i++ {
		if f, ok := stored[fp.FrameAt(i)]; !ok || f.JobID != final {
			c.mixedFrames++
			e.t.Errorf("%s: frame %d is %+v, want the final job's", movieID, fp.FrameAt(i), f.JobID)
		}
	}
	for i, f := range stored {
		if i >= fp.From && f.JobID != final {
			c.mixedFrames++
			e.t.Errorf("%s: frame %d of job %s after the final job's start %d", movieID, i, f.JobID, fp.From)
		}
	}
	markers := map[string]bool{}
	for _, mk := range row.Settings.Markers {
		markers[mk.ID] = true
	}
	for i, f := range stored {
		same := len(f.Points) == len(markers)
		for _, p := range f.Points {
			same = same && markers[p.MarkerID]
		}
		if !same {
			c.mixedMarkerSets++
			e.t.Errorf("%s: frame %d (job %s) was traced for markers %+v, not the current set %v", movieID, i, f.JobID, f.Points, markers)
		}
	}
	for i := row.Settings.Trim.Start; i < fp.From; i++ {
		if _, ok := stored[i]; !ok {
			c.mixedFrames++
			e.t.Errorf("%s: frame %d below the final start %d (clean before %d) is missing", movieID, i, fp.From, row.CleanBefore)
		}
	}
}

// lossyStores are the workers' movie and frame stores on a client whose
// transport loses the answer of some committed writes.
type lossyStores struct {
	ft     *ftransport.Transport
	movies *dynamo.MovieStore
	frames *dynamo.FrameStore
}

func newLossyStores(t *testing.T, e *env) *lossyStores {
	ft := ftransport.New(nil)
	client := testenv.DynamoDB(t, func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: ft}
		o.Retryer = awsretry.NewStandard(func(so *awsretry.StandardOptions) {
			so.Backoff = awsretry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
		})
	})
	return &lossyStores{ft: ft, movies: dynamo.NewMovieStore(client, e.tables.Movies), frames: dynamo.NewFrameStore(client, e.tables.Frames)}
}

// arm makes the next movie-row write (one invocation in four) or fenced
// frame write (one in six) commit and lose its answer, by a 500 or a reset.
//
// At most one loss is pending at a time: losses piling up on one request
// would exhaust the SDK's own retries (3 attempts), a transport failure
// rather than a lost answer.
func (l *lossyStores) arm(rng *rand.Rand) {
	if l.ft.Pending() > 0 {
		return
	}
	kind := []ftransport.Kind{ftransport.Lose500, ftransport.Drop}[rng.IntN(2)]
	if rng.IntN(4) == 0 {
		l.ft.Inject(ftransport.Rule{Op: "UpdateItem", Kind: kind, Times: 1})
	}
	if rng.IntN(6) == 0 && l.ft.Pending() == 0 {
		l.ft.Inject(ftransport.Rule{Op: "TransactWriteItems", Kind: kind, Times: 1})
	}
}

// changeMarkers replaces the movie's markers through an analysis lease, as
// a page would between two traces.
func (e *env) changeMarkers(movieID string) {
	ctx := context.Background()
	id, user := token.New(), users[0]
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, err := e.movies.Commit(ctx, movieID, domain.OpenAnalysis{LeaseID: id, User: user, Now: time.Now(), Duration: segLease})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: Analyze never opened: %v", movieID, err)
		}
	}
	row, err := e.movies.Get(ctx, movieID)
	if err != nil {
		e.t.Fatal(err)
	}
	next := []domain.Marker{{ID: fmt.Sprintf("m%d", row.Version), Label: "new", X: 0.25, Y: 0.75}}
	for _, c := range []domain.Command{
		domain.EditMarkers{LeaseID: id, UserID: user.ID, Now: time.Now(), Markers: next},
		domain.Release{LeaseID: id, Now: time.Now()},
	} {
		if _, err := e.movies.Commit(ctx, movieID, c); err != nil {
			e.t.Fatalf("%s: %T: %v", movieID, c, err)
		}
	}
}

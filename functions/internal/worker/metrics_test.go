package worker_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/emf"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

// TestWorkerMetricsAreEMF drives the worker through every outcome it
// counts, on the in-memory store and the fake clock, and parses the EMF
// lines it wrote: a trace in five segments (four hand-offs at 60 frames per
// 8 s of the clock, then traced), a failed trace, a trace cancelled under it
// (lease lost), one whose renewals never got through (its own clock says the
// lease expired), a crashed invocation (abandoned), and four refused claims.
// Every series the catalogue gives the worker is written, with the counts
// of the scenario, no other series, and no ID anywhere in a record.
func TestWorkerMetricsAreEMF(t *testing.T) {
	e := newMemEnv(t)
	var buf bytes.Buffer
	metrics := func(o *worker.Options) { o.Metrics = emf.New(&buf, e.clock.Now) }
	ctx := context.Background()
	var ids []string
	start := func(movie string) events.TraceJob {
		e.createMovie(movie, 300)
		j := e.start(movie, alice, 0, e.now(), lease)
		ids = append(ids, movie, j.JobID)
		return j
	}
	run := func(want worker.Result, tw *testWorker, ctx context.Context, job events.TraceJob) {
		t.Helper()
		if out := tw.Run(ctx, job); out.Result != want {
			t.Fatalf("%s: %+v, want %s", job.MovieID, out, want)
		}
	}

	// Five segments.
	first := start("movie-segments")
	q := &memQueue{}
	tw := e.newWorker(budgetTracer(e, 60), lease, segmentOptions(q), metrics)
	for msgs, n := []events.TraceJob{first}, 0; len(msgs) > 0; msgs, n = q.take(), n+1 {
		if n > 5 {
			t.Fatal("more than five segments")
		}
		invoke(t, e, tw, "segment", msgs[0])
	}
	if m := e.get("movie-segments"); m.Status != domain.StatusTraced {
		t.Fatalf("segments: %+v", m)
	}
	// Its redelivery after the end: refused, lease_lost.
	run(worker.ResultNotClaimed, e.newWorker(tracer.NewSynthetic(), lease, metrics), ctx, first)

	// A tracer error.
	failing := start("movie-failed")
	run(worker.ResultFailed, e.newWorker(at(10, func(context.Context, domain.Frame, func(domain.Frame) error) error {
		return errors.New("decoder broke")
	}), lease, metrics), ctx, failing)

	// Cancelled by its user once the first batch is durable.
	cancelled := start("movie-cancelled")
	var tc *testWorker
	tc = e.newWorker(at(150, func(ctx context.Context, f domain.Frame, emit func(domain.Frame) error) error {
		if !waitUntil(func() bool { return tc.putsWritten() >= 99 }) {
			return errTimedOut
		}
		m := e.get("movie-cancelled")
		if _, err := e.store.Commit(ctx, "movie-cancelled", domain.CancelTrace{Job: *m.Lease, User: alice, Now: e.now()}); err != nil {
			return err
		}
		return emit(f)
	}), lease, metrics)
	run(worker.ResultLeaseLost, tc, ctx, cancelled)

	// The worker's clock passes its lease's expiry (renewals never made it).
	expiring := start("movie-expired")
	var tx *testWorker
	tx = e.newWorker(at(150, func(_ context.Context, f domain.Frame, emit func(domain.Frame) error) error {
		if !waitUntil(func() bool { return tx.putsWritten() >= 99 }) {
			return errTimedOut
		}
		e.fake.Step(lease + time.Second)
		return emit(f)
	}), lease, metrics)
	run(worker.ResultLeaseLost, tx, ctx, expiring)

	// The invocation ends mid-trace.
	crashing := start("movie-abandoned")
	crashCtx, crash := context.WithCancel(ctx)
	defer crash()
	var ta *testWorker
	ta = e.newWorker(at(150, func(_ context.Context, f domain.Frame, emit func(domain.Frame) error) error {
		if !waitUntil(func() bool { return ta.putsWritten() >= 99 }) {
			return errTimedOut
		}
		crash()
		return emit(f)
	}), lease, metrics)
	run(worker.ResultStranded, ta, crashCtx, crashing)

	// Refused claims: claimed by another worker, no such movie, invalid job.
	claimed := start("movie-claimed")
	if _, err := e.store.Commit(ctx, "movie-claimed", domain.ClaimSegment{JobID: claimed.JobID, Token: token.New(), Now: e.now(), Duration: lease}); err != nil {
		t.Fatal(err)
	}
	other := e.newWorker(tracer.NewSynthetic(), lease, metrics)
	run(worker.ResultNotClaimed, other, ctx, claimed)
	run(worker.ResultNotClaimed, other, ctx, events.TraceJob{MovieID: "no-such-movie", JobID: token.New()})
	run(worker.ResultNotClaimed, other, ctx, events.TraceJob{MovieID: "movie-claimed", JobID: "not-an-id"})

	out := buf.String()
	points, err := emf.Parse(&buf)
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	outcome := func(o worker.Result) string {
		return emf.KeyOf(emf.WorkerSegments, map[string]string{emf.DimensionOutcome: string(o)})
	}
	refusal := func(r string) string { return emf.KeyOf(emf.ClaimRefusals, map[string]string{emf.DimensionReason: r}) }
	conflict := func(r string) string {
		return emf.KeyOf(emf.LeaseConflicts, map[string]string{emf.DimensionFunction: "worker", emf.DimensionReason: r})
	}
	want := map[string]float64{
		outcome(worker.ResultHandedOff): 4, outcome(worker.ResultTraced): 1, outcome(worker.ResultFailed): 1,
		outcome(worker.ResultLeaseLost): 2, outcome(worker.ResultStranded): 1,
		conflict("lease_lost"): 1, conflict("expired"): 1,
		refusal("lease_lost"): 1, refusal("already_claimed"): 1, refusal("not_found"): 1, refusal(emf.Other): 1,
		emf.ContinuationSegments: 4,
		// 300 in segments, 10 before the failure, the first batch of 99
		// of each of the other three.
		emf.FramesTraced: 300 + 10 + 3*99,
	}
	sums := emf.Sums(points)
	for k, v := range want {
		if sums[k] != v {
			t.Errorf("%s = %v, want %v", k, sums[k], v)
		}
	}
	// Frames per second of the segments that took 8 s of the clock for 60
	// frames; the last segment and the failed trace took no clock time (no
	// rate); the expired trace's first 99 frames took one lease.
	var rates []float64
	for _, p := range points {
		if p.Name == emf.FramesPerSecond {
			rates = append(rates, p.Value)
		}
	}
	wantRates := []float64{7.5, 7.5, 7.5, 7.5, 99 / (lease + time.Second).Seconds()}
	if len(rates) != len(wantRates) {
		t.Errorf("frame rates %v, want %v", rates, wantRates)
	}
	for i := range min(len(rates), len(wantRates)) {
		if rates[i] != wantRates[i] {
			t.Errorf("frame rate %d = %v, want %v", i, rates[i], wantRates[i])
		}
	}
	if missing, foreign := emf.Coverage(emf.Worker, points); len(missing)+len(foreign) != 0 {
		t.Errorf("series never written %v, written but not the worker's %v", missing, foreign)
	}
	for _, id := range ids {
		if strings.Contains(out, id) {
			t.Errorf("an ID (%s) reached the metrics:\n%s", id, out)
		}
	}
}

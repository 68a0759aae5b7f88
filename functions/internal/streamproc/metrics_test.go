package streamproc_test

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/emf"
	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
)

// TestBatchMetricsAreEMF: one batch holding every kind of trace outcome
// (started, completed, failed, cancelled, abandoned) and a poison record
// writes one EMF record whose counts are the batch's, with no dimension and
// no member but the counts (no ID of any kind). Every series the catalogue
// gives the stream processor is really written, with a non-zero value: the
// dashboard's panels for them are not empty by construction.
func TestBatchMetricsAreEMF(t *testing.T) {
	e := newEnv(t)
	var out bytes.Buffer
	h, err := streamproc.New(streamproc.Options{
		Queue: e.sqs, Audit: e.ddb, QueueURL: e.queueURL, AuditTable: e.tables.Audit, PoisonQueueURL: e.poisonURL,
		Log: slog.New(slog.DiscardHandler), Backoff: noBackoff, Metrics: emf.New(&out, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	start := func(id string, at time.Time) domain.Movie {
		return e.apply(id, domain.StartTrace{JobID: newID(), User: alice, Now: at, Duration: lease})
	}
	claim := func(id string, m domain.Movie, at time.Time) domain.Lease {
		return *e.apply(id, domain.ClaimSegment{JobID: m.Lease.ID, Now: at, Duration: lease}).Lease
	}
	for _, id := range []string{"done", "failed", "cancelled", "abandoned"} {
		e.createMovie("metrics-"+id, t0)
	}
	m := start("metrics-done", t0)
	e.apply("metrics-done", domain.CompleteJob{Job: claim("metrics-done", m, t0.Add(time.Second)), Now: t0.Add(time.Minute), FramesWritten: 300})
	m = start("metrics-failed", t0)
	e.apply("metrics-failed", domain.FailJob{Job: claim("metrics-failed", m, t0.Add(time.Second)), Now: t0.Add(time.Minute), FramesWritten: 3, Summary: "The movie could not be read."})
	m = start("metrics-cancelled", t0)
	e.apply("metrics-cancelled", domain.CancelTrace{Job: *m.Lease, User: alice, Now: t0.Add(time.Second)})
	start("metrics-abandoned", t0)
	start("metrics-abandoned", t0.Add(time.Hour)) // replaces the stale job

	recs := e.read()
	poison := poisonOf(t, recs[len(recs)-1], "no movie ID", "900000000000000000009", "s3cr3t")
	recs = append(recs[:len(recs):len(recs)], poison)
	if failed := e.handle(h, recs); len(failed) != 0 {
		t.Fatalf("batch failures %v", failed)
	}
	points, err := emf.Parse(&out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := map[string]float64{emf.TracesStarted: 5, emf.TracesCompleted: 1, emf.TracesFailed: 1,
		emf.TracesCancelled: 1, emf.TracesAbandoned: 1, emf.PoisonRecords: 1}
	got := emf.Sums(points)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (%s)", k, got[k], v, out.String())
		}
	}
	for _, p := range points {
		if len(p.Dimensions) != 0 {
			t.Errorf("%s has dimensions", p.Key())
		}
		for member := range p.Members {
			if _, counted := want[member]; !counted {
				t.Errorf("record member %q is not a count", member)
			}
		}
	}
	if missing, foreign := emf.Coverage(emf.StreamProcessor, points); len(missing)+len(foreign) != 0 {
		t.Errorf("series never written %v, written but not the stream processor's %v", missing, foreign)
	}
}

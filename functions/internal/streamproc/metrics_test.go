package streamproc_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events/emf"
	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
)

// TestBatchMetricsAreEMF: a batch with a trace start writes one EMF record
// with TracesStarted 1 and the other counts 0.
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
	m := e.createMovie("metrics-movie", t0)
	e.apply(m.ID, domain.StartTrace{JobID: newID(), User: alice, Now: t0, Duration: lease})
	recs := e.read()
	if failed := e.handle(h, recs); len(failed) != 0 {
		t.Fatalf("batch failures %v", failed)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d EMF lines, want 1: %q", len(lines), out.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{emf.TracesStarted: 1, emf.TracesCompleted: 0, emf.TracesFailed: 0, emf.TracesAbandoned: 0, emf.PoisonRecords: 0}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("%s = %v, want %v (record %s)", k, rec[k], v, lines[0])
		}
	}
	if _, ok := rec["_aws"]; !ok {
		t.Errorf("no _aws member: %s", lines[0])
	}
}

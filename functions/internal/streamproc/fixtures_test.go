package streamproc_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/schema"
)

// Recorded fixtures: Lambda-format DynamoDB stream events captured from
// DynamoDB Local's real stream by TestFixtures. To re-record them:
//
//	RECORD_FIXTURES=1 make test PKGS=./functions/internal/streamproc TEST_FLAGS='-count=1 -run TestFixtures'
//	(or: go test ./functions/internal/streamproc -run TestFixtures -record, with the emulators' env set)
var record = flag.Bool("record", false, "re-record testdata/streams from DynamoDB Local")

const fixtureDir = "../../../testdata/streams"

// fixtureARN replaces the recording's stream ARN, which names a per-test table.
const fixtureARN = "arn:aws:dynamodb:us-east-1:000000000000:table/movies/stream/2026-12-02T12:00:00.000"

// batch is one recorded invocation: the records one scenario step wrote.
type batch struct {
	name string
	recs []lambdaevents.DynamoDBEventRecord
}

// recordScenario runs the scripted scenario through the API's store on
// DynamoDB Local and returns the real stream's records, one batch per step.
func recordScenario(e *env) []batch {
	e.tb.Helper()
	var out []batch
	cut := func(name string) { out = append(out, batch{name, e.read()}) }

	// 1. Analyse, edit, trace, complete.
	const m1 = "fixture-movie-1"
	e.createMovie(m1, t0)
	a1 := newID()
	e.apply(m1, domain.OpenAnalysis{LeaseID: a1, User: alice, Now: t0, Duration: lease})
	e.apply(m1, domain.Heartbeat{LeaseID: a1, Now: t0.Add(30 * time.Second), Duration: lease})
	e.apply(m1, domain.EditMarkers{LeaseID: a1, Now: t0.Add(time.Minute), Markers: []domain.Marker{
		{ID: "tip", Label: "needle tip", X: 0.25, Y: 0.75}, {ID: "base", Label: "base", X: 0.5, Y: 0.5}}})
	job1 := newID()
	at := t0.Add(2 * time.Minute)
	e.apply(m1, domain.StartTrace{LeaseID: a1, JobID: job1, User: alice, FromFrame: 0, Now: at, Duration: lease})
	claimed := e.apply(m1, domain.ClaimSegment{JobID: job1, Now: at.Add(time.Second), Duration: lease})
	fence := domain.JobFence{JobID: job1, Now: at.Add(2 * time.Second)}
	e.apply(m1, domain.BeginTrace{JobFence: fence, Duration: lease, CleanBefore: 0, TotalFrames: 300})
	fence.Now = at.Add(time.Minute)
	e.apply(m1, domain.RenewJob{JobFence: fence, Duration: lease, FramesWritten: 120})
	e.apply(m1, domain.CompleteJob{Job: *claimed.Lease, Now: at.Add(2 * time.Minute), FramesWritten: 300})
	cut("lifecycle")

	// 2. A second trace of the same movie fails with a hostile message.
	a2 := newID()
	at = t0.Add(time.Hour)
	e.apply(m1, domain.OpenAnalysis{LeaseID: a2, User: bob, Now: at, Duration: lease})
	e.apply(m1, domain.EditTrim{LeaseID: a2, Now: at.Add(time.Minute), Trim: domain.Trim{Start: 10, End: 290}})
	job2 := newID()
	e.apply(m1, domain.StartTrace{LeaseID: a2, JobID: job2, User: bob, FromFrame: 10, Now: at.Add(2 * time.Minute), Duration: lease})
	claimed = e.apply(m1, domain.ClaimSegment{JobID: job2, Now: at.Add(3 * time.Minute), Duration: lease})
	fence = domain.JobFence{JobID: job2, Now: at.Add(4 * time.Minute)}
	e.apply(m1, domain.BeginTrace{JobFence: fence, Duration: lease, CleanBefore: 10, TotalFrames: 280})
	e.apply(m1, domain.FailJob{Job: *claimed.Lease, Now: at.Add(5 * time.Minute), FramesWritten: 7, Summary: hostileFailure})
	cut("failure")

	// 3. Stale takeovers: a job never claimed is replaced by an analysis
	// lease; a claimed job whose worker died is replaced by a new trace.
	const m2 = "fixture-movie-2"
	e.createMovie(m2, t0)
	job3 := newID()
	e.apply(m2, domain.StartTrace{JobID: job3, User: alice, FromFrame: 0, Now: t0, Duration: lease})
	at = t0.Add(20 * time.Minute)
	a3 := newID()
	e.apply(m2, domain.OpenAnalysis{LeaseID: a3, User: bob, Now: at, Duration: lease})
	e.apply(m2, domain.Heartbeat{LeaseID: a3, Now: at.Add(time.Minute), Duration: lease})
	job4 := newID()
	e.apply(m2, domain.StartTrace{LeaseID: a3, JobID: job4, User: bob, FromFrame: 0, Now: at.Add(2 * time.Minute), Duration: lease})
	e.apply(m2, domain.ClaimSegment{JobID: job4, Now: at.Add(3 * time.Minute), Duration: lease})
	at = at.Add(40 * time.Minute)
	job5 := newID()
	e.apply(m2, domain.StartTrace{JobID: job5, User: alice, FromFrame: 0, Now: at, Duration: lease})
	claimed = e.apply(m2, domain.ClaimSegment{JobID: job5, Now: at.Add(time.Second), Duration: lease})
	e.apply(m2, domain.CompleteJob{Job: *claimed.Lease, Now: at.Add(time.Minute), FramesWritten: 300})
	cut("takeover")
	return out
}

// shape is what a fixture must keep: per record, its event name and the
// types of the events it derives.
func shape(tb testing.TB, b batch) []string {
	tb.Helper()
	var out []string
	for _, r := range b.recs {
		c, err := schema.DecodeRecord(r)
		if err != nil {
			tb.Fatalf("%s: %v", b.name, err)
		}
		s := r.EventName
		for _, ev := range events.Derive(c.Old, c.New) {
			s += " " + strings.TrimPrefix(string(ev.Type), "movie.tracing.")
		}
		out = append(out, s)
	}
	return out
}

var wantShapes = map[string][]string{
	"lifecycle": {"INSERT", "MODIFY", "MODIFY", "MODIFY", "MODIFY started", "MODIFY", "MODIFY", "MODIFY", "MODIFY completed"},
	"failure":   {"MODIFY", "MODIFY", "MODIFY started", "MODIFY", "MODIFY", "MODIFY failed"},
	"takeover": {"INSERT", "MODIFY started", "MODIFY abandoned", "MODIFY", "MODIFY started", "MODIFY",
		"MODIFY abandoned started", "MODIFY", "MODIFY completed"},
}

// TestFixtures records the scenario from DynamoDB Local's real stream on
// every run. With -record or RECORD_FIXTURES=1 it rewrites
// testdata/streams; otherwise it checks that the committed fixtures still
// have the shape the live stream has (the store and the fixtures agree).
func TestFixtures(t *testing.T) {
	e := newEnv(t)
	live := recordScenario(e)
	for _, b := range live {
		if got := shape(t, b); !reflect.DeepEqual(got, wantShapes[b.name]) {
			t.Errorf("live %s:\n got %q\nwant %q", b.name, got, wantShapes[b.name])
		}
	}
	if *record || os.Getenv("RECORD_FIXTURES") == "1" {
		if err := os.MkdirAll(fixtureDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, b := range live {
			for i := range b.recs {
				// The recording's table name and DynamoDB Local's region
				// ("ddblocal") become what Lambda would deliver in us-east-1.
				b.recs[i].EventSourceArn = fixtureARN
				b.recs[i].AWSRegion = "us-east-1"
			}
			data, err := json.MarshalIndent(lambdaevents.DynamoDBEvent{Records: b.recs}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(fixtureDir, b.name+".json"), append(data, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("recorded %d fixtures in %s", len(live), fixtureDir)
	}
	for _, b := range loadFixtures(t) {
		if got := shape(t, b); !reflect.DeepEqual(got, wantShapes[b.name]) {
			t.Errorf("fixture %s:\n got %q\nwant %q (re-record with RECORD_FIXTURES=1)", b.name, got, wantShapes[b.name])
		}
	}
}

// loadFixtures reads every committed fixture batch, in name order.
func loadFixtures(tb testing.TB) []batch {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no fixtures in %s (%v)", fixtureDir, err)
	}
	var out []batch
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		evs, err := schema.DecodeEvents(data)
		if err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		for _, ev := range evs {
			out = append(out, batch{strings.TrimSuffix(filepath.Base(f), ".json"), ev.Records})
		}
	}
	return out
}

// str reads a string attribute at a path of map keys, "" if absent.
func str(img map[string]lambdaevents.DynamoDBAttributeValue, path ...string) (string, bool) {
	cur := lambdaevents.NewMapAttribute(img)
	for _, k := range path {
		if cur.DataType() != lambdaevents.DataTypeMap {
			return "", false
		}
		next, ok := cur.Map()[k]
		if !ok {
			return "", false
		}
		cur = next
	}
	switch cur.DataType() {
	case lambdaevents.DataTypeString:
		return cur.String(), true
	case lambdaevents.DataTypeBoolean:
		if cur.Boolean() {
			return "true", true
		}
		return "false", true
	}
	return "", false
}

// The event source mapping's filters, as predicates over a record: the one
// the stack uses and the tighter one docs/stream.md proposes.
var filters = map[string]func(r lambdaevents.DynamoDBEventRecord) bool{
	"status": func(r lambdaevents.DynamoDBEventRecord) bool {
		n, _ := str(r.Change.NewImage, "status")
		o, _ := str(r.Change.OldImage, "status")
		return n == "tracing" || n == "traced" || n == "tracing_failed" || o == "tracing"
	},
	"lease": func(r lambdaevents.DynamoDBEventRecord) bool {
		nk, _ := str(r.Change.NewImage, "lease", "kind")
		nc, _ := str(r.Change.NewImage, "lease", "claimed")
		ok, _ := str(r.Change.OldImage, "lease", "kind")
		return (nk == "tracing" && nc == "false") || (ok == "tracing" && nk != "tracing")
	},
}

// TestFiltersLoseNothing: every fixture record that derives an event passes
// both filters (the fixtures hold every kind of transition).
func TestFiltersLoseNothing(t *testing.T) {
	var recs []lambdaevents.DynamoDBEventRecord
	for _, b := range loadFixtures(t) {
		recs = append(recs, b.recs...)
	}
	for name, pass := range filters {
		kept, needed := 0, 0
		for _, r := range recs {
			c, err := schema.DecodeRecord(r)
			if err != nil {
				t.Fatal(err)
			}
			if pass(r) {
				kept++
			}
			if len(events.Derive(c.Old, c.New)) > 0 {
				needed++
				if !pass(r) {
					t.Errorf("filter %s drops record %s, which derives events", name, r.Change.SequenceNumber)
				}
			}
		}
		t.Logf("filter %s keeps %d of %d records (%d derive events)", name, kept, len(recs), needed)
	}
}

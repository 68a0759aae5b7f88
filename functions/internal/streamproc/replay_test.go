package streamproc_test

import (
	"reflect"
	"sort"
	"testing"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/schema"
)

// TestReplayFixturesTwice handles every recorded batch, then replays every
// batch twice: the audit table and the set of enqueued job IDs stay as they
// were after the first pass.
func TestReplayFixturesTwice(t *testing.T) {
	e := newEnv(t)
	fixtures := loadFixtures(t)
	var all []lambdaevents.DynamoDBEventRecord
	wantJobs := map[string]bool{}
	wantItems := 0
	for _, b := range fixtures {
		all = append(all, b.recs...)
		for _, r := range b.recs {
			c, err := schema.DecodeRecord(r)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range events.Derive(c.Old, c.New) {
				wantItems++
				if ev.Type == events.TracingStarted {
					wantJobs[ev.JobID] = true
				}
			}
		}
	}
	for _, b := range fixtures {
		e.mustHandle(b.recs)
	}
	firstAudit := e.rawAudit()
	firstJobs := jobIDs(e.drain())
	if len(firstAudit) != wantItems || len(firstAudit) != 10 {
		t.Fatalf("first pass wrote %d audit items, want %d (10)", len(firstAudit), wantItems)
	}
	if !reflect.DeepEqual(firstJobs, sortedKeys(wantJobs)) || len(firstJobs) != 5 {
		t.Fatalf("first pass enqueued %v, want %v", firstJobs, sortedKeys(wantJobs))
	}

	e.counter.Reset()
	for range 2 {
		for _, b := range fixtures {
			e.mustHandle(b.recs)
		}
	}
	if got := e.rawAudit(); !reflect.DeepEqual(got, firstAudit) {
		t.Errorf("replay changed the audit table:\nbefore %v\nafter  %v", firstAudit, got)
	}
	replayJobs := jobIDs(e.drain())
	if !reflect.DeepEqual(dedupe(replayJobs), firstJobs) {
		t.Errorf("replay enqueued jobs %v, want only %v", replayJobs, firstJobs)
	}
	// A replay finds every item present in one request per batch and
	// writes nothing.
	if n := e.counter.Of("TransactWriteItems"); n != 2*len(fixtures) {
		t.Errorf("replay took %d TransactWriteItems, want %d", n, 2*len(fixtures))
	}

	for _, it := range e.audit() {
		if it.Type == string(events.TracingFailed) {
			assertSafeSummary(t, it.Summary)
		}
		if it.Type == string(events.TracingAbandoned) && it.Summary != domain.StalledSummary {
			t.Errorf("abandoned summary %q", it.Summary)
		}
	}
	ids := leaseIDs(all)
	if len(ids) < 3 {
		t.Fatalf("fixtures carry %d analysis lease IDs; the leak check needs them", len(ids))
	}
	e.assertNoLeak(ids)
}

func jobIDs(jobs []events.TraceJob) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.JobID)
	}
	sort.Strings(out)
	return out
}

func dedupe(s []string) []string {
	m := map[string]bool{}
	for _, v := range s {
		m[v] = true
	}
	return sortedKeys(m)
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

package streamproc_test

import (
	"testing"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/schema"
)

// TestAbandonedJobIsNotEnqueued: the recorded stale takeovers (an unclaimed
// job replaced by an analysis lease; a claimed job whose worker died
// replaced by a new trace) handed to the handler on their own. Each
// abandoned job gets its audit item and no job message: a job whose lease
// was taken over must never run again. Only the job that replaced one is
// enqueued.
func TestAbandonedJobIsNotEnqueued(t *testing.T) {
	e := newEnv(t)
	var recs []lambdaevents.DynamoDBEventRecord
	abandoned, started := map[string]bool{}, map[string]bool{}
	for _, b := range loadFixtures(t) {
		if b.name != "takeover" {
			continue
		}
		for _, r := range b.recs {
			c, err := schema.DecodeRecord(r)
			if err != nil {
				t.Fatal(err)
			}
			took := false
			var starts []string
			for _, ev := range events.Derive(c.Old, c.New) {
				switch ev.Type {
				case events.TracingAbandoned:
					abandoned[ev.JobID], took = true, true
				case events.TracingStarted:
					starts = append(starts, ev.JobID)
				}
			}
			if took {
				recs = append(recs, r)
				for _, j := range starts {
					started[j] = true
				}
			}
		}
	}
	if len(recs) != 2 || len(abandoned) != 2 || len(started) != 1 {
		t.Fatalf("fixture: %d takeover records, abandoned %v, started %v", len(recs), abandoned, started)
	}

	e.mustHandle(recs)
	jobs := e.drain()
	if len(jobs) != 1 || !started[jobs[0].JobID] {
		t.Errorf("enqueued %+v, want only the replacing job %v", jobs, started)
	}
	for _, j := range jobs {
		if abandoned[j.JobID] {
			t.Errorf("abandoned job %s was enqueued again", j.JobID)
		}
	}
	audit := e.audit()
	for j := range abandoned {
		found := false
		for _, it := range audit {
			found = found || (it.JobID == j && it.Type == string(events.TracingAbandoned))
		}
		if !found {
			t.Errorf("no abandoned audit item for %s", j)
		}
	}
	// Replayed (a Lambda retry), nothing is enqueued for them either.
	e.mustHandle(recs)
	for _, j := range e.drain() {
		if abandoned[j.JobID] {
			t.Errorf("replay enqueued abandoned job %s", j.JobID)
		}
	}
}

package streamproc_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/schema"
)

// fiveStarts commits an analysis session and a trace start on five movies
// and returns the five StartTrace records (what the ESM's filter delivers
// of them, in commit order), their job IDs and the analysis lease IDs.
func fiveStarts(e *env) (recs []lambdaevents.DynamoDBEventRecord, jobs, leases []string) {
	e.tb.Helper()
	for i := range 5 {
		id := fmt.Sprintf("movie-%d", i)
		e.createMovie(id, t0)
		a, j := newID(), newID()
		e.apply(id, domain.OpenAnalysis{LeaseID: a, User: alice, Now: t0, Duration: lease})
		e.apply(id, domain.StartTrace{LeaseID: a, JobID: j, User: alice, FromFrame: i, Now: t0.Add(time.Minute), Duration: lease})
		jobs, leases = append(jobs, j), append(leases, a)
	}
	for _, r := range e.read() {
		if c, err := schema.DecodeRecord(r); err == nil && len(events.Derive(c.Old, c.New)) > 0 {
			recs = append(recs, r)
		}
	}
	if len(recs) != 5 {
		e.tb.Fatalf("%d start records", len(recs))
	}
	return recs, jobs, leases
}

// TestThirdRecordFails: whichever way the third record of a batch fails,
// the response reports exactly its sequence number and the two records
// before it have taken full effect (message enqueued, audit item written).
// "undecodable" is a poison record that could not be set aside (the poison
// queue refuses it): only then is a poison record reported (see
// TestPoisonRecordBlocksNothing for the usual case).
func TestThirdRecordFails(t *testing.T) {
	for _, how := range []string{"undecodable", "sqs entry", "audit item"} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t)
			recs, jobs, leases := fiveStarts(e)
			h := e.handler
			var q *failingQueue
			var a *failingAudit
			switch how {
			case "undecodable":
				// A corrupt row: its version is no number. The OldImage still
				// holds the analysis lease, which the log line must not show.
				bad := recs[2]
				img := map[string]lambdaevents.DynamoDBAttributeValue{}
				for k, v := range bad.Change.NewImage {
					img[k] = v
				}
				img[schema.AttrVersion] = lambdaevents.NewStringAttribute("seven " + leases[2])
				bad.Change.NewImage = img
				recs[2] = bad
				q = &failingQueue{QueueAPI: e.sqs, poison: map[string]bool{"poison": true}}
				h = e.newHandler(q, e.ddb)
			case "sqs entry":
				q = &failingQueue{QueueAPI: e.sqs, poison: map[string]bool{jobs[2]: true}}
				h = e.newHandler(q, e.ddb)
			case "audit item":
				a = &failingAudit{AuditAPI: e.ddb, poison: map[string]bool{jobs[2] + "#" + string(events.TracingStarted): true}}
				h = e.newHandler(e.sqs, a)
			}

			failed := e.handle(h, recs)
			if want := recs[2].Change.SequenceNumber; len(failed) != 1 || failed[0] != want {
				t.Fatalf("reported %v, want exactly [%s]; logs:\n%s", failed, want, e.logs)
			}
			enqueued := map[string]bool{}
			for _, j := range e.drain() {
				enqueued[j.JobID] = true
			}
			audit := e.audit()
			for i := range 2 {
				if !enqueued[jobs[i]] {
					t.Errorf("record %d: job not enqueued", i)
				}
				if _, ok := audit["movie-"+fmt.Sprint(i)+" "+jobs[i]+"#"+string(events.TracingStarted)]; !ok {
					t.Errorf("record %d: no audit item", i)
				}
			}
			if _, ok := audit["movie-2 "+jobs[2]+"#"+string(events.TracingStarted)]; ok && how != "sqs entry" {
				t.Errorf("the failed record's audit item was written")
			}
			switch how {
			case "undecodable":
				// Nothing at or after the failed record was attempted.
				if enqueued[jobs[2]] || enqueued[jobs[3]] || len(audit) != 2 {
					t.Errorf("work past the undecodable record: jobs %v, audit %d items", enqueued, len(audit))
				}
				logs := e.logs.String()
				if !strings.Contains(logs, "undecodable stream record") || !strings.Contains(logs, recs[2].Change.SequenceNumber) ||
					!strings.Contains(logs, `"record":{`) || !strings.Contains(logs, "poison record not set aside") {
					t.Errorf("undecodable record not logged in full:\n%s", logs)
				}
				// Four tries of the poison message, then one request for
				// the two jobs before it.
				if q.calls != 5 {
					t.Errorf("%d SendMessageBatch calls, want 5", q.calls)
				}
				if p := e.poisoned(); len(p) != 0 {
					t.Errorf("poison queue holds %d messages", len(p))
				}
			case "sqs entry":
				if enqueued[jobs[2]] {
					t.Error("the poisoned job was enqueued")
				}
				if q.calls != 4 { // one request, then three retries of the failed entry
					t.Errorf("%d SendMessageBatch calls, want 4 (DefaultMaxAttempts)", q.calls)
				}
				// The audit write stopped before the failed record.
				if len(audit) != 2 {
					t.Errorf("audit has %d items, want the 2 before the failed record", len(audit))
				}
			case "audit item":
				if len(enqueued) != 5 {
					t.Errorf("%d jobs enqueued, want all 5 (SQS succeeded)", len(enqueued))
				}
				if a.calls < 2 {
					t.Errorf("%d TransactWriteItems calls: the items beside the poisoned one were not retried alone", a.calls)
				}
			}
			e.assertNoLeak(leases)

			// Lambda's retry from the reported record (with the fault gone)
			// completes the batch; the records before it change nothing.
			if how != "undecodable" {
				e.mustHandle(recs[2:])
				if got := len(e.audit()); got != 5 {
					t.Errorf("after the retry the audit has %d items, want 5", got)
				}
			}
		})
	}
}

// TestHostileSummaryInRow: even a row whose stored failure summary was
// never sanitized (a buggy or hostile writer) yields a safe audit item.
func TestHostileSummaryInRow(t *testing.T) {
	e := newEnv(t)
	var failRec lambdaevents.DynamoDBEventRecord
	for _, b := range loadFixtures(t) {
		if b.name == "failure" {
			failRec = b.recs[len(b.recs)-1]
		}
	}
	for i, hostile := range []string{
		hostileFailure,
		"panic: runtime error: index out of range [3] with length 3\n\ngoroutine 12 [running]:\ngithub.com/movietrace/tracinglocks/worker.(*Tracer).Frame(...)\n\t/home/runner/work/worker/trace.go:141 +0x2a5",
		"Traceback (most recent call last):\n  File \"/opt/worker/main.py\", line 10, in <module>",
		"failed to reach s3 with Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261202/us-east-1/s3/aws4_request, Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024",
		"password=hunter2; token: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig; C:\\Users\\ci\\secrets.txt",
		strings.Repeat("\x1b[31m", 100) + "x",
	} {
		rec := failRec
		img := map[string]lambdaevents.DynamoDBAttributeValue{}
		for k, v := range rec.Change.NewImage {
			img[k] = v
		}
		job := map[string]lambdaevents.DynamoDBAttributeValue{}
		for k, v := range img[schema.AttrLastJob].Map() {
			job[k] = v
		}
		job["failureSummary"] = lambdaevents.NewStringAttribute(hostile)
		img[schema.AttrLastJob] = lambdaevents.NewMapAttribute(job)
		rec.Change.NewImage = img

		e.newAuditTable()
		e.handler = e.newHandler(e.sqs, e.ddb)
		e.mustHandle([]lambdaevents.DynamoDBEventRecord{rec})
		audit := e.audit()
		if len(audit) != 1 {
			t.Fatalf("%d: audit %+v", i, audit)
		}
		for _, it := range audit {
			if it.Type != string(events.TracingFailed) {
				t.Fatalf("%d: %+v", i, it)
			}
			assertSafeSummary(t, it.Summary)
		}
	}
}

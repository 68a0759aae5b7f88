package streamproc_test

import (
	"encoding/json"
	"strings"
	"testing"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
	"github.com/movietrace/tracinglocks/schema"
)

// poisonOf returns a copy of rec that can never decode, in one of several
// ways a hand-edited or buggy row could look, with a fresh sequence
// number. secret is planted in the broken attribute: it must not reach a
// log line or the poison queue.
func poisonOf(t *testing.T, rec lambdaevents.DynamoDBEventRecord, how, seq, secret string) lambdaevents.DynamoDBEventRecord {
	t.Helper()
	img := map[string]lambdaevents.DynamoDBAttributeValue{}
	for k, v := range rec.Change.NewImage {
		img[k] = v
	}
	switch how {
	case "version not a number":
		img[schema.AttrVersion] = lambdaevents.NewStringAttribute("seven " + secret)
	case "lease not a map":
		img[schema.AttrLease] = lambdaevents.NewStringAttribute(secret)
	case "markers not a list":
		img[schema.AttrMarkers] = lambdaevents.NewStringAttribute("m1 " + secret)
	case "no movie ID":
		delete(img, schema.AttrMovieID)
	default:
		t.Fatalf("unknown poison %q", how)
	}
	rec.Change.NewImage = img
	rec.Change.SequenceNumber = seq
	rec.EventID = "poison-" + seq
	if _, err := schema.DecodeRecord(rec); err == nil {
		t.Fatalf("%s: the poison record decodes", how)
	}
	return rec
}

// lifecycle returns the recorded lifecycle batch: open, heartbeat, edit,
// start (index 4), claim, begin, renew, complete (index 8).
func lifecycle(t *testing.T) []lambdaevents.DynamoDBEventRecord {
	t.Helper()
	for _, b := range loadFixtures(t) {
		if b.name == "lifecycle" {
			return b.recs
		}
	}
	t.Fatal("no lifecycle fixture")
	return nil
}

// TestPoisonRecordBlocksNothing: real recorded events.DynamoDBEvent records
// of a whole trace, with undecodable records between them (before the
// trace start and before the completion). The batch reports no failure (so
// Lambda neither retries nor blocks the shard), the trace start behind the
// poison is enqueued and its started and completed audit items exist, and
// each poison record is on the poison queue, logged and counted, with no
// lease ID anywhere.
func TestPoisonRecordBlocksNothing(t *testing.T) {
	for _, how := range []string{"version not a number", "lease not a map", "markers not a list", "no movie ID"} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t)
			life := lifecycle(t)
			secrets := leaseIDs(life)
			if len(secrets) == 0 {
				t.Fatal("the fixture holds no analysis lease ID to watch for")
			}
			p1 := poisonOf(t, life[3], how, "900000000000000000001", secrets[0])
			p2 := poisonOf(t, life[7], how, "900000000000000000002", secrets[0])
			var recs []lambdaevents.DynamoDBEventRecord
			recs = append(recs, life[:4]...)
			recs = append(recs, p1)
			recs = append(recs, life[4:8]...)
			recs = append(recs, p2, life[8])

			e.mustHandle(recs)

			start, err := schema.DecodeRecord(life[4])
			if err != nil {
				t.Fatal(err)
			}
			jobID := start.New.Lease.ID
			jobs := e.drain()
			if len(jobs) != 1 || jobs[0].JobID != jobID {
				t.Errorf("enqueued %+v, want the one job %s", jobs, jobID)
			}
			audit := e.audit()
			for _, typ := range []events.EventType{events.TracingStarted, events.TracingCompleted} {
				if _, ok := audit[start.New.ID+" "+jobID+"#"+string(typ)]; !ok {
					t.Errorf("no %s audit item; audit %v", typ, audit)
				}
			}
			poisoned := e.poisoned()
			if len(poisoned) != 2 {
				t.Fatalf("poison queue holds %d messages, want 2", len(poisoned))
			}
			seqs := map[string]bool{}
			for _, p := range poisoned {
				seqs[p.SequenceNumber] = true
				if p.EventSourceARN != life[3].EventSourceArn || p.Error == "" || len(p.Record) == 0 || p.RecordOmitted != "" {
					t.Errorf("poison message %+v lacks what re-driving needs", p)
				}
				var back lambdaevents.DynamoDBEventRecord
				if err := json.Unmarshal(p.Record, &back); err != nil || back.Change.SequenceNumber != p.SequenceNumber {
					t.Errorf("poison message's record does not decode as a stream record (%v)", err)
				}
				b, _ := json.Marshal(p)
				for _, id := range secrets {
					if strings.Contains(string(b), id) {
						t.Errorf("lease ID %s in a poison message", id)
					}
				}
			}
			if !seqs[p1.Change.SequenceNumber] || !seqs[p2.Change.SequenceNumber] {
				t.Errorf("poison messages name %v", seqs)
			}
			logs := e.logs.String()
			if !strings.Contains(logs, `"poison":2`) || strings.Count(logs, "undecodable stream record") != 2 {
				t.Errorf("poison records not logged and counted:\n%s", logs)
			}
			e.assertNoLeak(secrets)
		})
	}
}

// TestPoisonRecordUnit: the rules on fakes. A poison record set aside is
// not reported; one that cannot be set aside (queue down, or no poison
// queue configured, as in the replay command) is reported and nothing at
// or after it is done.
func TestPoisonRecordUnit(t *testing.T) {
	recs := manyStarts(t, 5)
	bad := recs[2]
	bad.Change.NewImage = withMovie(bad.Change.NewImage, "movie-2")
	bad.Change.NewImage[schema.AttrVersion] = lambdaevents.NewStringAttribute("x")
	recs[2] = bad

	t.Run("set aside", func(t *testing.T) {
		q := &fakeQueue{}
		h, _ := fakeHandler(q, &fakeAudit{})
		if failed := run(t, h, recs); len(failed) != 0 {
			t.Fatalf("reported %v", failed)
		}
		// One poison message, then one batch of the four jobs.
		if len(q.requests) != 2 || len(q.requests[0]) != 1 || len(q.requests[1]) != 4 {
			t.Fatalf("requests %v", q.requests)
		}
		var p streamproc.PoisonRecord
		if err := json.Unmarshal([]byte(*q.requests[0][0].MessageBody), &p); err != nil || p.SequenceNumber != bad.Change.SequenceNumber {
			t.Fatalf("poison message %+v (%v)", p, err)
		}
	})
	t.Run("poison queue down", func(t *testing.T) {
		q := &fakeQueue{reply: func(e sqstypes.SendMessageBatchRequestEntry) (bool, bool, bool) {
			return *e.Id != "poison", false, false
		}}
		h, logs := fakeHandler(q, &fakeAudit{})
		if failed := run(t, h, recs); len(failed) != 1 || failed[0] != bad.Change.SequenceNumber {
			t.Fatalf("reported %v, want [%s]; logs:\n%s", failed, bad.Change.SequenceNumber, logs)
		}
		// DefaultMaxAttempts poison tries, then the two jobs before it.
		if len(q.requests) != streamproc.DefaultMaxAttempts+1 || len(q.requests[len(q.requests)-1]) != 2 {
			t.Fatalf("requests %v", q.requests)
		}
	})
	t.Run("sender fault is not retried", func(t *testing.T) {
		q := &fakeQueue{reply: func(e sqstypes.SendMessageBatchRequestEntry) (bool, bool, bool) {
			return *e.Id != "poison", true, false
		}}
		h, _ := fakeHandler(q, &fakeAudit{})
		if failed := run(t, h, recs); len(failed) != 1 {
			t.Fatalf("reported %v", failed)
		}
		if len(q.requests) != 2 {
			t.Fatalf("%d requests, want 2", len(q.requests))
		}
	})
	t.Run("no poison queue", func(t *testing.T) {
		q := &fakeQueue{}
		h, err := streamproc.New(streamproc.Options{Queue: q, Audit: &fakeAudit{}, QueueURL: "https://queue.invalid/q", AuditTable: "audit", Backoff: noBackoff})
		if err != nil {
			t.Fatal(err)
		}
		if failed := run(t, h, recs); len(failed) != 1 || failed[0] != bad.Change.SequenceNumber {
			t.Fatalf("reported %v", failed)
		}
		if len(q.requests) != 1 || len(q.requests[0]) != 2 {
			t.Fatalf("requests %v", q.requests)
		}
	})
	t.Run("too large to carry", func(t *testing.T) {
		big := bad
		big.Change.NewImage = withMovie(bad.Change.NewImage, "movie-2")
		big.Change.NewImage["title"] = lambdaevents.NewStringAttribute(strings.Repeat("x", 300<<10))
		q := &fakeQueue{}
		h, _ := fakeHandler(q, &fakeAudit{})
		if failed := run(t, h, []lambdaevents.DynamoDBEventRecord{big}); len(failed) != 0 {
			t.Fatalf("reported %v", failed)
		}
		var p streamproc.PoisonRecord
		body := *q.requests[0][0].MessageBody
		if err := json.Unmarshal([]byte(body), &p); err != nil || len(p.Record) != 0 || p.RecordOmitted == "" || len(body) > 1<<10 {
			t.Fatalf("poison message of %d bytes: %+v (%v)", len(body), p.RecordOmitted, err)
		}
	})
}

// TestNewRefusesIncompleteOptions: construction fails on what the handler
// cannot run without.
func TestNewRefusesIncompleteOptions(t *testing.T) {
	full := streamproc.Options{Queue: &fakeQueue{}, Audit: &fakeAudit{}, QueueURL: "q", AuditTable: "a"}
	for name, mutate := range map[string]func(*streamproc.Options){
		"no queue":         func(o *streamproc.Options) { o.Queue = nil },
		"no audit":         func(o *streamproc.Options) { o.Audit = nil },
		"no queue URL":     func(o *streamproc.Options) { o.QueueURL = "" },
		"no audit table":   func(o *streamproc.Options) { o.AuditTable = "" },
		"negative retries": func(o *streamproc.Options) { o.MaxAttempts = -1 },
	} {
		o := full
		mutate(&o)
		if _, err := streamproc.New(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := streamproc.New(full); err != nil {
		t.Errorf("complete options refused: %v", err)
	}
}

package streamproc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/schema"
)

// TestLiveTraceLifecycle commits API-style transitions on DynamoDB Local,
// reads the table's real stream, and runs the handler against the SQS
// emulator after each step.
func TestLiveTraceLifecycle(t *testing.T) {
	e := newEnv(t)
	const id = "movie-live"
	e.createMovie(id, t0)
	analysis := newID()
	e.apply(id, domain.OpenAnalysis{LeaseID: analysis, User: alice, Now: t0, Duration: lease})
	e.apply(id, domain.Heartbeat{LeaseID: analysis, Now: t0.Add(time.Minute), Duration: lease})
	e.apply(id, domain.EditCaptureInterval{LeaseID: analysis, Now: t0.Add(2 * time.Minute), Interval: 2})
	job := newID()
	startAt := t0.Add(3 * time.Minute)
	m := e.apply(id, domain.StartTrace{LeaseID: analysis, JobID: job, User: alice, FromFrame: 10, Now: startAt, Duration: lease})

	recs := e.read()
	if len(recs) != 5 {
		t.Fatalf("read %d records, want INSERT + 4 MODIFY", len(recs))
	}
	e.mustHandle(recs)

	// Exactly one message for the job, and one started item.
	jobs := e.drain()
	want := events.TraceJob{MovieID: id, JobID: job, FromFrame: 10, Version: m.Version}
	if len(jobs) != 1 || jobs[0] != want {
		t.Fatalf("enqueued %+v, want exactly %+v", jobs, want)
	}
	audit := e.audit()
	startedKey := id + " " + job + "#" + string(events.TracingStarted)
	wantStarted := schema.AuditItem{MovieID: id, EventKey: job + "#movie.tracing.started", Type: "movie.tracing.started",
		JobID: job, UserID: alice.ID, UserName: alice.Name, OccurredAt: "2026-12-02T12:03:00.000Z", FromFrame: 10, Version: m.Version,
		TrimEnd: 300, CaptureInterval: 2, FirstFrame: 0, LastFrame: 298} // its plan: frames 0 to 298 (nothing was clean below 10)
	wantStarted.HistoryKey = wantStarted.Position().IndexKey()
	if len(audit) != 1 || audit[startedKey] != wantStarted {
		t.Fatalf("audit %+v, want only %+v", audit, wantStarted)
	}

	// The worker claims, renews and completes: one completed item, no message.
	claimed := e.apply(id, domain.ClaimSegment{JobID: job, Now: startAt.Add(time.Second), Duration: lease})
	e.apply(id, domain.RenewJob{JobFence: domain.JobFence{JobID: job, Now: startAt.Add(time.Minute)}, Duration: lease, FramesWritten: 50})
	done := e.apply(id, domain.CompleteJob{Job: *claimed.Lease, Now: startAt.Add(2 * time.Minute), FramesWritten: 145})
	e.mustHandle(e.read())
	if jobs := e.drain(); len(jobs) != 0 {
		t.Fatalf("completion enqueued %+v", jobs)
	}
	audit = e.audit()
	completed := audit[id+" "+job+"#"+string(events.TracingCompleted)]
	if len(audit) != 2 || completed.Type != "movie.tracing.completed" || completed.OccurredAt != "2026-12-02T12:05:00.000Z" ||
		completed.Version != done.Version || completed.Summary != "" || completed.UserName != alice.Name {
		t.Fatalf("audit after completion %+v", audit)
	}

	// A second trace fails with a hostile message.
	analysis2 := newID()
	at := t0.Add(time.Hour)
	e.apply(id, domain.OpenAnalysis{LeaseID: analysis2, User: bob, Now: at, Duration: lease})
	job2 := newID()
	e.apply(id, domain.StartTrace{LeaseID: analysis2, JobID: job2, User: bob, FromFrame: 0, Now: at.Add(time.Minute), Duration: lease})
	claimed = e.apply(id, domain.ClaimSegment{JobID: job2, Now: at.Add(2 * time.Minute), Duration: lease})
	e.apply(id, domain.FailJob{Job: *claimed.Lease, Now: at.Add(3 * time.Minute), FramesWritten: 3, Summary: hostileFailure})
	recs = e.read()
	e.mustHandle(recs)
	if jobs := e.drain(); len(jobs) != 1 || jobs[0].JobID != job2 {
		t.Fatalf("second trace enqueued %+v", jobs)
	}
	audit = e.audit()
	failed := audit[id+" "+job2+"#"+string(events.TracingFailed)]
	if len(audit) != 4 || failed.Type != "movie.tracing.failed" || failed.UserName != bob.Name || failed.Summary == "" {
		t.Fatalf("audit after failure %+v", audit)
	}
	assertSafeSummary(t, failed.Summary)
	e.assertNoLeak([]string{analysis, analysis2})
	if len(leaseIDs(recs)) == 0 {
		t.Fatal("the records carried no analysis lease: the leak check proved nothing")
	}
}

// TestLiveStaleTakeover: a job whose worker died is abandoned when a later
// commit replaces its stale lease.
func TestLiveStaleTakeover(t *testing.T) {
	e := newEnv(t)
	const id = "movie-stale"
	e.createMovie(id, t0)
	dead := newID()
	e.apply(id, domain.StartTrace{JobID: dead, User: alice, FromFrame: 0, Now: t0, Duration: lease})
	// 20 minutes later the lease is stale: Bob starts his own trace.
	next := newID()
	later := t0.Add(20 * time.Minute)
	m := e.apply(id, domain.StartTrace{JobID: next, User: bob, FromFrame: 0, Now: later, Duration: lease})
	e.mustHandle(e.read())
	jobs := e.drain()
	ids := map[string]bool{}
	for _, j := range jobs {
		ids[j.JobID] = true
	}
	if len(jobs) != 2 || !ids[dead] || !ids[next] {
		t.Fatalf("enqueued %+v", jobs)
	}
	audit := e.audit()
	ab := audit[id+" "+dead+"#"+string(events.TracingAbandoned)]
	// The dead job was never claimed: the takeover recorded it on the row
	// as queued too long (issue 12 item 10), and its one audit item says so.
	if len(audit) != 3 || ab.Summary != domain.QueuedTooLongSummary || ab.OccurredAt != "2026-12-02T12:15:00.000Z" ||
		ab.Version != m.Version || ab.UserName != alice.Name {
		t.Fatalf("audit %+v", audit)
	}
}

// assertSafeSummary: no stack trace, path, URL, credential or ID.
func assertSafeSummary(t *testing.T, s string) {
	t.Helper()
	for _, bad := range []string{"goroutine", "trace.go", "/var", "/src", "secrets", "wJalr", "AKIA", "hunter2",
		"example.invalid", "0123456789abcdef", "\n", "\t", "0x1d", "://"} {
		if strings.Contains(s, bad) {
			t.Errorf("summary %q contains %q", s, bad)
		}
	}
	if s != domain.SanitizeSummary(s) {
		t.Errorf("summary %q is not sanitized", s)
	}
}

package dynamo_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv/faults"
	"github.com/movietrace/tracinglocks/schema"
)

// Issue 12 item 10 on DynamoDB Local: an opener (or a trace start without a
// lease) over a stale tracing lease records the abandoned job as failed on
// the row itself, in the write that replaces the lease: the first request
// is refused (its ALL_OLD row shows the stale tracing lease) and the
// takeover, fenced on that very lease, commits. The row, the answer and
// the stream's derivation agree with the domain: exactly one event, the
// job's abandonment, whatever answer was lost on the way.
func TestTakeoverOfAStaleTraceRecordsItsJobOnTheRow(t *testing.T) {
	for _, lost := range []faults.Kind{0, faults.Lose500, faults.Drop} {
		t.Run(lostName(lost), func(t *testing.T) {
			f := newFaulty(t)
			ctx := context.Background()
			id := "takeover"
			createMovie(t, f.clean, id)
			job := newID(t)
			apply(t, f.clean, id, domain.StartTrace{JobID: job, User: alice, FromFrame: 0, Now: t0, Duration: lease})
			apply(t, f.clean, id, domain.ClaimSegment{JobID: job, Token: newID(t), Now: t0, Duration: lease})
			apply(t, f.clean, id, domain.BeginTrace{JobFence: domain.JobFence{JobID: job, Now: t0}, Duration: lease, TotalFrames: 300})
			stale := apply(t, f.clean, id, domain.RenewJob{JobFence: domain.JobFence{JobID: job, Now: t0.Add(time.Second)}, Duration: lease, FramesWritten: 40})

			open := domain.OpenAnalysis{LeaseID: newID(t), User: bob, Now: stale.Lease.ExpiresAt.Add(time.Millisecond), Duration: lease}
			want, err := domain.Execute(&stale, open)
			if err != nil {
				t.Fatal(err)
			}
			if lost != 0 {
				// The takeover (the only write that stores tracing_failed)
				// commits and its answer is lost; the SDK retries it.
				f.ft.Inject(faults.Rule{Op: "UpdateItem", Contains: string(domain.StatusFailed), Kind: lost, Times: 1})
			}
			before := f.ft.Requests("UpdateItem")
			got, err := f.movies.Commit(ctx, id, open)
			if err != nil {
				t.Fatalf("open over a stale trace: %v", err)
			}
			wantRequests := 2 // the refused open, the takeover
			if lost != 0 {
				wantRequests = 3 // and the takeover's retry, recognised as done
			}
			if n := f.ft.Requests("UpdateItem") - before; n != wantRequests || f.ft.Pending() != 0 {
				t.Fatalf("%d UpdateItem requests (%d faults pending), want %d", n, f.ft.Pending(), wantRequests)
			}
			stored, err := f.clean.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			for name, m := range map[string]domain.Movie{"stored": stored, "answered": got} {
				if !reflect.DeepEqual(schema.NewMovieItem(m), schema.NewMovieItem(want)) {
					t.Fatalf("%s row\n %+v\nwant the domain's\n %+v", name, schema.NewMovieItem(m), schema.NewMovieItem(want))
				}
			}
			j := stored.LastJob
			if stored.Status != domain.StatusFailed || j == nil || j.JobID != job || j.Status != domain.StatusFailed ||
				j.Frames != 40 || j.FailureSummary != domain.StalledSummary || stored.Lease.ID != open.LeaseID {
				t.Fatalf("after the takeover: status %s, last job %+v, lease %+v", stored.Status, j, stored.Lease)
			}
			evs := events.Derive(&stale, &stored)
			if len(evs) != 1 || evs[0].Type != events.TracingAbandoned || evs[0].JobID != job || evs[0].Summary != domain.StalledSummary {
				t.Fatalf("the takeover derives %+v, want exactly one abandoned event for job %s", evs, job)
			}
		})
	}
}

// A trace start without a lease over a stale tracing lease: the new job
// runs, the abandoned one is the row's last job, failed.
func TestStartOverAStaleTraceRecordsTheAbandonedJob(t *testing.T) {
	s, _, _ := newStore(t)
	id := "restart"
	createMovie(t, s, id)
	job1, job2 := newID(t), newID(t)
	stale := apply(t, s, id, domain.StartTrace{JobID: job1, User: alice, FromFrame: 0, Now: t0, Duration: lease})
	m := apply(t, s, id, domain.StartTrace{JobID: job2, User: bob, FromFrame: 0, Now: t0.Add(2 * lease), Duration: lease})
	if m.Status != domain.StatusTracing || m.Lease.ID != job2 || m.LastJob == nil || m.LastJob.JobID != job1 ||
		m.LastJob.Status != domain.StatusFailed || m.LastJob.FailureSummary != domain.QueuedTooLongSummary {
		t.Fatalf("status %s, lease %+v, last job %+v", m.Status, m.Lease, m.LastJob)
	}
	types := map[events.EventType]int{}
	for _, e := range events.Derive(&stale, &m) {
		types[e.Type]++
	}
	if !reflect.DeepEqual(types, map[events.EventType]int{events.TracingAbandoned: 1, events.TracingStarted: 1}) {
		t.Fatalf("derived %v, want one abandoned and one started", types)
	}
}

func lostName(k faults.Kind) string {
	if k == 0 {
		return "clean"
	}
	return "answer-lost-" + k.String()
}

// hookTransport runs before[i] (if any) just before forwarding the i-th
// request whose body contains match (counting from 0).
type hookTransport struct {
	match  string
	before []func()
	seen   int
	total  int // every request
}

func (h *hookTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	h.total++
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(h.match)) {
			if h.seen < len(h.before) {
				h.before[h.seen]()
			}
			h.seen++
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestTakeoverRacingTheWorker: an opener takes over a tracing lease that is
// stale by its clock while the job's worker (its clock behind) still renews
// and then completes it between the opener's requests. Each refused
// takeover is decided again on the newer row; the opener's answer is its
// own command's outcome on a row it read (here: the lease, once the job
// completed), never a refusal the open itself would not give (it used to
// run out of rounds and answer lease_lost).
func TestTakeoverRacingTheWorker(t *testing.T) {
	clean, _, tables := newStore(t)
	id := "race"
	createMovie(t, clean, id)
	job := newID(t)
	apply(t, clean, id, domain.StartTrace{JobID: job, User: alice, FromFrame: 0, Now: t0, Duration: lease})
	claimed := apply(t, clean, id, domain.ClaimSegment{JobID: job, Token: newID(t), Now: t0, Duration: lease})
	expires := claimed.Lease.ExpiresAt
	openAt := expires.Add(100 * time.Millisecond)
	fence := func(now time.Time) domain.JobFence { return domain.JobFence{JobID: job, Now: now} }
	hook := &hookTransport{match: string(domain.StatusFailed), before: []func(){
		// The worker renews just before its lease ends, to just before the
		// opener's Now: still stale for the opener.
		func() {
			apply(t, clean, id, domain.RenewJob{JobFence: fence(expires.Add(-50 * time.Millisecond)), Duration: 100 * time.Millisecond, FramesWritten: 3})
		},
		// And completes.
		func() {
			apply(t, clean, id, domain.CompleteJob{Job: *claimed.Lease, Now: expires.Add(10 * time.Millisecond), FramesWritten: 3})
		},
	}}
	racing := dynamo.NewMovieStore(testenv.DynamoDB(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: hook} }), tables.Movies)
	open := domain.OpenAnalysis{LeaseID: newID(t), User: bob, Now: openAt, Duration: lease}
	m, err := racing.Commit(context.Background(), id, open)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if hook.seen != 2 || m.Lease == nil || m.Lease.ID != open.LeaseID || m.Status != domain.StatusTraced || m.LastJob.JobID != job {
		t.Fatalf("after %d takeover attempts: status %s, lease %+v, last job %+v", hook.seen, m.Status, m.Lease, m.LastJob)
	}
}

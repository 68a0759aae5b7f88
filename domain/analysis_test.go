package domain_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

func TestOpenAnalysis(t *testing.T) {
	// Bob opened Analyze at t0; his lease expires at t0+d.
	bobs := analysing(t, leaseB, bob, t0)
	expiresAt := bobs.Lease.ExpiresAt
	runCases(t, []cmdCase{
		{
			name:  "with no lease the browser acquires an analysis lease",
			movie: newMovie(t),
			cmd:   domain.OpenAnalysis{LeaseID: leaseA, User: alice, Now: at(ms), Duration: d},
			check: func(t *testing.T, before, after domain.Movie) {
				requireLease(t, after, domain.LeaseAnalysis, leaseA, alice, at(ms), at(ms), d)
				if after.Lease.Claimed {
					t.Fatal("an analysis lease is never claimed")
				}
				requireStatus(t, after, before.Status)
				if !after.Lease.LiveAt(at(ms)) {
					t.Fatal("a fresh lease is not live")
				}
			},
		},
		{
			name:   "a live analysis lease of another browser refuses with lease_held naming its holder",
			movie:  bobs,
			cmd:    domain.OpenAnalysis{LeaseID: leaseA, User: alice, Now: at(d / 2), Duration: d},
			code:   domain.CodeLeaseHeld,
			holder: storedHolder,
		},
		{
			name:   "the same user's second browser is refused too: the lease belongs to a page",
			movie:  analysing(t, leaseA, alice, t0),
			cmd:    domain.OpenAnalysis{LeaseID: leaseC, User: alice, Now: at(d / 2), Duration: d},
			code:   domain.CodeLeaseHeld,
			holder: storedHolder,
		},
		{
			// Issue 12 item 1: the first attempt committed, its answer was
			// lost and the SDK retried; the opener gets its lease, not 409.
			name:   "a retried open with its own live lease ID is the same success and writes nothing",
			movie:  analysing(t, leaseA, alice, t0),
			cmd:    domain.OpenAnalysis{LeaseID: leaseA, User: alice, Now: at(d / 2), Duration: d},
			replay: true,
		},
		{
			name:   "the same lease ID sent by another user is refused",
			movie:  analysing(t, leaseA, alice, t0),
			cmd:    domain.OpenAnalysis{LeaseID: leaseA, User: bob, Now: at(d / 2), Duration: d},
			code:   domain.CodeLeaseHeld,
			holder: storedHolder,
		},
		{
			name:   "a live tracing lease refuses with tracing_in_progress naming the initiator",
			movie:  tracing(t, job1, t0),
			cmd:    domain.OpenAnalysis{LeaseID: leaseB, User: bob, Now: at(d / 2), Duration: d},
			code:   domain.CodeTracingInProgress,
			holder: storedHolder,
		},
		{
			name:   "a lease 1ms before ExpiresAt is still live and blocks",
			movie:  bobs,
			cmd:    domain.OpenAnalysis{LeaseID: leaseA, User: alice, Now: expiresAt.Add(-ms), Duration: d},
			code:   domain.CodeLeaseHeld,
			holder: storedHolder,
		},
		{
			name:  "a lease at exactly ExpiresAt is stale and replaced",
			movie: bobs,
			cmd:   domain.OpenAnalysis{LeaseID: leaseA, User: alice, Now: expiresAt, Duration: d},
			check: func(t *testing.T, _, after domain.Movie) {
				requireLease(t, after, domain.LeaseAnalysis, leaseA, alice, expiresAt, expiresAt, d)
			},
		},
		{
			name:  "a stale analysis lease is replaced",
			movie: bobs,
			cmd:   domain.OpenAnalysis{LeaseID: leaseA, User: alice, Now: at(2 * d), Duration: d},
			check: func(t *testing.T, _, after domain.Movie) {
				requireLease(t, after, domain.LeaseAnalysis, leaseA, alice, at(2*d), at(2*d), d)
			},
		},
		{
			// Issue 12 item 10: the takeover records the abandoned job as
			// failed on the row itself (it used to stay tracing, with an
			// older last job, and only read as tracing_failed).
			name:  "a stale tracing lease is taken over and its job recorded as failed on the row",
			movie: claimed(t, job1, t0),
			cmd:   domain.OpenAnalysis{LeaseID: leaseB, User: bob, Now: at(d), Duration: d},
			check: func(t *testing.T, before, after domain.Movie) {
				requireLease(t, after, domain.LeaseAnalysis, leaseB, bob, at(d), at(d), d)
				if after.Lease.Claimed || after.Lease.FromFrame != 0 || after.Lease.ClaimToken != "" || after.Lease.Segment != 0 {
					t.Fatalf("the new analysis lease inherited job state: %+v", *after.Lease)
				}
				requireStatus(t, after, domain.StatusFailed)
				requireAbandoned(t, after, *before.Lease, at(d), domain.StalledSummary)
				if after.Version != before.Version+1 {
					t.Fatalf("version %d, want %d: one write", after.Version, before.Version+1)
				}
				if v := after.View(at(d)); v.Status != domain.StatusFailed || v.LastJob.JobID != job1 {
					t.Fatalf("view %+v", v)
				}
			},
		},
		{
			name:  "a stale, never claimed tracing lease is recorded as queued too long",
			movie: tracing(t, job1, t0),
			cmd:   domain.OpenAnalysis{LeaseID: leaseB, User: bob, Now: at(2 * d), Duration: d},
			check: func(t *testing.T, before, after domain.Movie) {
				requireStatus(t, after, domain.StatusFailed)
				requireAbandoned(t, after, *before.Lease, at(2*d), domain.QueuedTooLongSummary)
			},
		},
		{
			// The takeover committed, its answer was lost, the SDK retried it.
			name:   "a retried open finds its lease on the taken-over row",
			movie:  exec(t, claimed(t, job1, t0), domain.OpenAnalysis{LeaseID: leaseB, User: bob, Now: at(d), Duration: d}),
			cmd:    domain.OpenAnalysis{LeaseID: leaseB, User: bob, Now: at(d), Duration: d},
			replay: true,
		},
		{
			name:  "the same browser reopens with its own stale lease ID",
			movie: analysing(t, leaseA, alice, t0),
			cmd:   domain.OpenAnalysis{LeaseID: leaseA, User: alice, Now: at(d + ms), Duration: d},
			check: func(t *testing.T, _, after domain.Movie) {
				requireLease(t, after, domain.LeaseAnalysis, leaseA, alice, at(d+ms), at(d+ms), d)
			},
		},
		{
			name:  "a custom duration sets ExpiresAt",
			movie: newMovie(t),
			cmd:   domain.OpenAnalysis{LeaseID: leaseA, User: alice, Now: t0, Duration: 30 * ms},
			check: func(t *testing.T, _, after domain.Movie) {
				requireLease(t, after, domain.LeaseAnalysis, leaseA, alice, t0, t0, 30*ms)
			},
		},
	})
}

func TestHeartbeat(t *testing.T) {
	mine := analysing(t, leaseA, alice, t0)
	runCases(t, []cmdCase{
		{
			name:  "the holder's live lease is extended by one duration from now",
			movie: mine,
			cmd:   domain.Heartbeat{LeaseID: leaseA, Now: at(d - ms), Duration: d},
			check: func(t *testing.T, _, after domain.Movie) {
				requireLease(t, after, domain.LeaseAnalysis, leaseA, alice, t0, at(d-ms), d)
			},
		},
		{
			name:   "a stale own lease cannot be revived: lease_lost",
			movie:  mine,
			cmd:    domain.Heartbeat{LeaseID: leaseA, Now: at(d), Duration: d},
			code:   domain.CodeLeaseLost,
			holder: noHolder,
		},
		{
			name:   "another browser's live lease is not the caller's: lease_lost naming that holder",
			movie:  analysing(t, leaseB, bob, t0),
			cmd:    domain.Heartbeat{LeaseID: leaseA, Now: at(ms), Duration: d},
			code:   domain.CodeLeaseLost,
			holder: storedHolder,
		},
		{
			name:   "a tracing lease with the same ID string is not an analysis lease",
			movie:  tracing(t, leaseA, t0),
			cmd:    domain.Heartbeat{LeaseID: leaseA, Now: at(ms), Duration: d},
			code:   domain.CodeLeaseLost,
			holder: storedHolder,
		},
		{
			name:   "after a trace replaced the caller's analysis lease, its heartbeat is lease_lost",
			movie:  tracing(t, job1, t0),
			cmd:    domain.Heartbeat{LeaseID: leaseA, Now: at(ms), Duration: d},
			code:   domain.CodeLeaseLost,
			holder: storedHolder,
		},
		{
			name:   "with no lease the heartbeat is lease_lost naming nobody",
			movie:  newMovie(t),
			cmd:    domain.Heartbeat{LeaseID: leaseA, Now: at(ms), Duration: d},
			code:   domain.CodeLeaseLost,
			holder: noHolder,
		},
	})
}

func TestRelease(t *testing.T) {
	mine := analysing(t, leaseA, alice, t0)
	runCases(t, []cmdCase{
		{
			name:  "the holder's live lease is removed",
			movie: mine,
			cmd:   domain.Release{LeaseID: leaseA, Now: at(d - ms)},
			check: func(t *testing.T, before, after domain.Movie) {
				requireNoLease(t, after)
				if after.Settings.Trim != before.Settings.Trim {
					t.Fatal("release changed the settings")
				}
			},
		},
		{
			name:  "a stale own lease is not_held and stays stored",
			movie: mine,
			cmd:   domain.Release{LeaseID: leaseA, Now: at(d)},
			code:  domain.CodeNotHeld,
		},
		{
			name:  "another browser's lease is not_held: an old page cannot remove a newer browser's lease",
			movie: analysing(t, leaseB, bob, t0),
			cmd:   domain.Release{LeaseID: leaseA, Now: at(ms)},
			code:  domain.CodeNotHeld,
		},
		{
			name:  "the same user's other browser cannot release it",
			movie: mine,
			cmd:   domain.Release{LeaseID: leaseC, Now: at(ms)},
			code:  domain.CodeNotHeld,
		},
		{
			name:  "a tracing lease with the same ID string is never released",
			movie: tracing(t, leaseA, t0),
			cmd:   domain.Release{LeaseID: leaseA, Now: at(ms)},
			code:  domain.CodeNotHeld,
		},
		{
			name:  "the page that started the trace cannot release the tracing lease",
			movie: tracing(t, job1, t0),
			cmd:   domain.Release{LeaseID: leaseA, Now: at(ms)},
			code:  domain.CodeNotHeld,
		},
		{
			name:  "with no lease the release is not_held",
			movie: newMovie(t),
			cmd:   domain.Release{LeaseID: leaseA, Now: at(ms)},
			code:  domain.CodeNotHeld,
		},
	})
}

// requireAbandoned fails unless m records job (the stale lease it had) as
// failed at now with the summary and the row's progress.
func requireAbandoned(t *testing.T, m domain.Movie, job domain.Lease, now time.Time, summary string) {
	t.Helper()
	want := job.Outcome(now, domain.StatusFailed, m.Progress.FramesWritten, summary)
	if m.LastJob == nil || !reflect.DeepEqual(*m.LastJob, want) {
		t.Fatalf("last job %+v, want %+v", m.LastJob, want)
	}
}

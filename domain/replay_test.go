package domain_test

import (
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// Issue 12 items 1, 8, 9, 10: replays of commands that already took effect
// are successes that write nothing; a lease ID is bound to its user; a
// marker change resets the clean range and a no-op edit writes nothing; a
// stale trace is finalized on the row.

const (
	token1 = "11111111111111111111111111111111"
	token2 = "22222222222222222222222222222222"
)

func TestReplaysAreSuccessesThatWriteNothing(t *testing.T) {
	mine := with(analysing(t, leaseA, alice, t0), cleanBefore(500), trimmed(100, 900))
	started := exec(t, mine, domain.StartTrace{LeaseID: leaseA, JobID: job1, User: alice, FromFrame: 100, Now: at(ms), Duration: d})
	claim := func(token string) domain.ClaimSegment {
		return domain.ClaimSegment{JobID: job1, Token: token, Now: at(2 * ms), Duration: d}
	}
	claimedBy1 := exec(t, started, claim(token1))
	done := exec(t, claimedBy1, domain.CompleteJob{Job: *claimedBy1.Lease, Now: at(time.Second), FramesWritten: 3})
	failed := exec(t, claimedBy1, domain.FailJob{Job: *claimedBy1.Lease, Now: at(time.Second), Summary: "boom"})
	runCases(t, []cmdCase{
		{name: "a retried trace start finds its own tracing lease", movie: started, replay: true,
			cmd: domain.StartTrace{LeaseID: leaseA, JobID: job1, User: alice, FromFrame: 100, Now: at(2 * ms), Duration: d}},
		{name: "a retried trace start finds its job finished", movie: done, replay: true,
			cmd: domain.StartTrace{LeaseID: leaseA, JobID: job1, User: alice, FromFrame: 100, Now: at(2 * time.Second), Duration: d}},
		{name: "another job's start is still refused", movie: started, code: domain.CodeTracingInProgress,
			cmd: domain.StartTrace{LeaseID: leaseA, JobID: job2, User: alice, FromFrame: 100, Now: at(2 * ms), Duration: d}},
		{name: "the claiming attempt's retry recognises its token", movie: claimedBy1, replay: true, cmd: claim(token1)},
		{name: "a redelivered message (a new token) is a no-op refusal", movie: claimedBy1, cmd: claim(token2), code: domain.CodeAlreadyClaimed},
		{name: "a claim without a token is never a replay", movie: claimedBy1, cmd: claim(""), code: domain.CodeAlreadyClaimed},
		{name: "a malformed token is invalid", movie: started, cmd: claim("xyz"), code: domain.CodeInvalid, field: "claimToken"},
		{name: "a retried completion finds its outcome", movie: done, replay: true,
			cmd: domain.CompleteJob{Job: *claimedBy1.Lease, Now: at(2 * time.Second), FramesWritten: 3}},
		{name: "a retried failure finds its outcome", movie: failed, replay: true,
			cmd: domain.FailJob{Job: *claimedBy1.Lease, Now: at(2 * time.Second), Summary: "boom"}},
		{name: "a failure with another summary is not this failure: lease_lost", movie: failed, code: domain.CodeLeaseLost,
			cmd: domain.FailJob{Job: *claimedBy1.Lease, Now: at(2 * time.Second), Summary: "another reason"}},
		{name: "completing a job recorded as failed is lease_lost", movie: failed, code: domain.CodeLeaseLost,
			cmd: domain.CompleteJob{Job: *claimedBy1.Lease, Now: at(2 * time.Second), FramesWritten: 3}},
	})
	stored := exec(t, started, claim(token1))
	if stored.Lease.ClaimToken != token1 {
		t.Fatalf("claim token %q, want %q", stored.Lease.ClaimToken, token1)
	}
}

func TestEditsBindTheLeaseToItsUserAndNoOpEditsWriteNothing(t *testing.T) {
	mine := with(analysing(t, leaseA, alice, t0), cleanBefore(500), trimmed(100, 900))
	same := mine.Settings.Markers
	runCases(t, []cmdCase{
		{name: "a marker edit by the lease's user", movie: mine, cmd: domain.EditMarkers{LeaseID: leaseA, UserID: alice.ID, Now: at(ms), Markers: twoMarkers},
			check: func(t *testing.T, _, after domain.Movie) {
				if after.CleanBefore != 0 {
					t.Fatalf("a marker change kept CleanBefore %d", after.CleanBefore)
				}
			}},
		{name: "the lease ID sent by another user is refused", movie: mine, code: domain.CodeLeaseHeld, holder: storedHolder,
			cmd: domain.EditMarkers{LeaseID: leaseA, UserID: bob.ID, Now: at(ms), Markers: twoMarkers}},
		{name: "a trim edit by another user is refused", movie: mine, code: domain.CodeLeaseHeld,
			cmd: domain.EditTrim{LeaseID: leaseA, UserID: bob.ID, Now: at(ms), Trim: domain.Trim{Start: 0, End: 10}}},
		{name: "an interval edit by another user is refused", movie: mine, code: domain.CodeLeaseHeld,
			cmd: domain.EditCaptureInterval{LeaseID: leaseA, UserID: bob.ID, Now: at(ms), Interval: 3}},
		{name: "a trace start with another user's lease ID is refused", movie: mine, code: domain.CodeLeaseHeld,
			cmd: domain.StartTrace{LeaseID: leaseA, JobID: job1, User: bob, FromFrame: 100, Now: at(ms), Duration: d}},
		{name: "the same markers again write nothing and keep the clean range", movie: mine, replay: true,
			cmd: domain.EditMarkers{LeaseID: leaseA, UserID: alice.ID, Now: at(ms), Markers: append([]domain.Marker(nil), same...)}},
		{name: "the same trim again writes nothing", movie: mine, replay: true,
			cmd: domain.EditTrim{LeaseID: leaseA, Now: at(ms), Trim: domain.Trim{Start: 100, End: 900}}},
		{name: "the same interval again writes nothing", movie: mine, replay: true,
			cmd: domain.EditCaptureInterval{LeaseID: leaseA, Now: at(ms), Interval: 1}},
		{name: "a no-op edit without the lease is still refused", movie: mine, code: domain.CodeLeaseLost,
			cmd: domain.EditCaptureInterval{LeaseID: leaseA, Now: at(d), Interval: 1}},
		{name: "a marker moved by a pixel is a change", movie: mine,
			cmd: domain.EditMarkers{LeaseID: leaseA, Now: at(ms), Markers: []domain.Marker{{ID: "m1", Label: "rider", X: 0.5, Y: 0.501}}},
			check: func(t *testing.T, _, after domain.Movie) {
				if after.CleanBefore != 0 {
					t.Fatalf("CleanBefore %d, want 0", after.CleanBefore)
				}
			}},
	})
}

func TestRetriedFinalizeAndSegmentClaimsAreReplays(t *testing.T) {
	started := exec(t, analysing(t, leaseA, alice, t0), domain.StartTrace{LeaseID: leaseA, JobID: job1, User: alice, Now: t0, Duration: d})
	job := *started.Lease
	finalized := exec(t, started, domain.FinalizeStaleTrace{Job: job, Now: job.ExpiresAt})
	seg := func(token string) domain.ClaimSegment {
		return domain.ClaimSegment{JobID: job1, Segment: 0, Token: token, Now: at(ms), Duration: d}
	}
	claimed := exec(t, started, seg(token1))
	runCases(t, []cmdCase{
		{name: "a retried finalize finds the outcome", movie: finalized, replay: true,
			cmd: domain.FinalizeStaleTrace{Job: job, Now: job.ExpiresAt.Add(time.Minute)}},
		{name: "a retried segment claim recognises its token", movie: claimed, replay: true, cmd: seg(token1)},
		{name: "a redelivered segment message stays a no-op", movie: claimed, cmd: seg(token2), code: domain.CodeAlreadyClaimed},
		{name: "a segment claim without a token is never a replay", movie: claimed, cmd: seg(""), code: domain.CodeAlreadyClaimed},
	})
}

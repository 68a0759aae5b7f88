package dynamo_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/schema"
)

// The boundary table: each bound of every precondition, on both sides, with
// the verdict written down from the design (not computed by the domain), run
// through domain.Execute and through the store on DynamoDB Local. A bound
// moved by one (>= for >, <= for <) in a rule, in the domain's evaluator or
// in the store's translation fails a row here deterministically.
func TestBoundaries(t *testing.T) {
	s, client, tables := newStore(t)
	const (
		mine  = "0123456789abcdef0123456789abcdef"
		other = "fedcba9876543210fedcba9876543210"
		job   = "00000000000000000000000000000001"
	)
	E := nowMs.Add(time.Minute) // every lease's stored expiry (whole ms)
	ns, ms := time.Nanosecond, time.Millisecond
	analysis := func(id string) *domain.Lease {
		return &domain.Lease{Kind: domain.LeaseAnalysis, ID: id, UserID: "u1", UserName: "Ada", AcquiredAt: t0, HeartbeatAt: t0, ExpiresAt: E}
	}
	tracing := func(claimed bool) *domain.Lease {
		return &domain.Lease{Kind: domain.LeaseTracing, ID: job, UserID: "u1", UserName: "Ada", AcquiredAt: t0, HeartbeatAt: t0, ExpiresAt: E, Claimed: claimed, FromFrame: 10}
	}
	d := time.Minute
	u := domain.User{ID: "u2", Name: "Brian"}
	ada := domain.User{ID: "u1", Name: "Ada"} // the holder of analysis(...)
	start := func(lease string, from int, now time.Time) domain.StartTrace {
		return domain.StartTrace{LeaseID: lease, JobID: other, User: ada, FromFrame: from, Now: now, Duration: d}
	}
	trim := func(end int) domain.EditTrim {
		return domain.EditTrim{LeaseID: mine, Now: E.Add(-ms), Trim: domain.Trim{Start: 0, End: end}}
	}
	fenced := func(now time.Time) domain.RenewJob {
		return domain.RenewJob{JobFence: domain.JobFence{JobID: job, Now: now}, Duration: d, FramesWritten: 3}
	}
	for i, tc := range []struct {
		name    string
		lease   *domain.Lease
		markers int // default 1; -1 for none
		absent  bool
		cmd     domain.Command
		want    domain.Code // "" accepted
	}{
		{name: "trim end = frameCount", lease: analysis(mine), cmd: trim(100)},
		{name: "trim end = frameCount+1", lease: analysis(mine), cmd: trim(101), want: domain.CodeInvalid},
		{name: "heartbeat 1 ms before expiry", lease: analysis(mine), cmd: domain.Heartbeat{LeaseID: mine, Now: E.Add(-ms), Duration: d}},
		{name: "heartbeat 1 ns before expiry", lease: analysis(mine), cmd: domain.Heartbeat{LeaseID: mine, Now: E.Add(-ns), Duration: d}},
		{name: "heartbeat at expiry", lease: analysis(mine), cmd: domain.Heartbeat{LeaseID: mine, Now: E, Duration: d}, want: domain.CodeLeaseLost},
		{name: "heartbeat of another lease", lease: analysis(other), cmd: domain.Heartbeat{LeaseID: mine, Now: t0, Duration: d}, want: domain.CodeLeaseLost},
		{name: "open 1 ns before expiry", lease: analysis(other), cmd: domain.OpenAnalysis{LeaseID: mine, User: u, Now: E.Add(-ns), Duration: d}, want: domain.CodeLeaseHeld},
		{name: "open at expiry", lease: analysis(other), cmd: domain.OpenAnalysis{LeaseID: mine, User: u, Now: E, Duration: d}},
		{name: "open over a live trace", lease: tracing(true), cmd: domain.OpenAnalysis{LeaseID: mine, User: u, Now: t0, Duration: d}, want: domain.CodeTracingInProgress},
		{name: "open a missing movie", absent: true, cmd: domain.OpenAnalysis{LeaseID: mine, User: u, Now: t0, Duration: d}, want: domain.CodeNotFound},
		{name: "start at trim start", lease: analysis(mine), cmd: start(mine, 10, t0)},
		{name: "start before trim start", lease: analysis(mine), cmd: start(mine, 9, t0), want: domain.CodeInvalid},
		{name: "start at trim end-1", lease: analysis(mine), cmd: start(mine, 49, t0)},
		{name: "start at trim end", lease: analysis(mine), cmd: start(mine, 50, t0), want: domain.CodeInvalid},
		{name: "start without markers", lease: analysis(mine), markers: -1, cmd: start(mine, 10, t0), want: domain.CodeInvalid},
		{name: "start without a lease ID on a free row", cmd: start("", 10, t0)},
		{name: "start without a lease ID at expiry", lease: analysis(mine), cmd: start("", 10, E)},
		{name: "start without a lease ID over a live lease", lease: analysis(mine), cmd: start("", 10, E.Add(-ns)), want: domain.CodeLeaseHeld},
		{name: "start with another's lease", lease: analysis(other), cmd: start(mine, 10, t0), want: domain.CodeLeaseHeld},
		{name: "start with the lease ID but another user", lease: analysis(mine), want: domain.CodeLeaseHeld,
			cmd: domain.StartTrace{LeaseID: mine, JobID: other, User: u, FromFrame: 10, Now: t0, Duration: d}},
		{name: "start with an expired page's lease ID on a free row", lease: analysis(mine), cmd: start(mine, 10, E), want: domain.CodeLeaseLost},
		{name: "start over a live trace", lease: tracing(false), cmd: start(mine, 10, t0), want: domain.CodeTracingInProgress},
		{name: "claim", lease: tracing(false), cmd: domain.ClaimSegment{JobID: job, Now: E.Add(-ns), Duration: d}},
		{name: "claim at expiry revives the unclaimed job", lease: tracing(false), cmd: domain.ClaimSegment{JobID: job, Now: E, Duration: d}},
		{name: "claim of another job at expiry", lease: tracing(false), cmd: domain.ClaimSegment{JobID: other, Now: E, Duration: d}, want: domain.CodeLeaseLost},
		{name: "claim twice", lease: tracing(true), cmd: domain.ClaimSegment{JobID: job, Now: t0, Duration: d}, want: domain.CodeAlreadyClaimed},
		{name: "fence claimed", lease: tracing(true), cmd: fenced(E.Add(-ns))},
		{name: "fence at expiry", lease: tracing(true), cmd: fenced(E), want: domain.CodeLeaseLost},
		{name: "fence unclaimed", lease: tracing(false), cmd: fenced(t0), want: domain.CodeLeaseLost},
		{name: "complete another job", lease: tracing(true), cmd: domain.CompleteJob{Job: *analysis(other), Now: t0, FramesWritten: 1}, want: domain.CodeLeaseLost},
		{name: "fail at 1 ms before expiry", lease: tracing(true), cmd: domain.FailJob{Job: *tracing(true), Now: E.Add(-ms), FramesWritten: 1, Summary: "x"}},
		{name: "release a tracing lease with its ID", lease: tracing(true), cmd: domain.Release{LeaseID: job, Now: t0}, want: domain.CodeNotHeld},
		{name: "release at expiry", lease: analysis(mine), cmd: domain.Release{LeaseID: mine, Now: E}, want: domain.CodeNotHeld},
		{name: "release 1 ns before expiry", lease: analysis(mine), cmd: domain.Release{LeaseID: mine, Now: E.Add(-ns)}},
		{name: "edit during a trace", lease: tracing(true), cmd: domain.EditCaptureInterval{LeaseID: mine, Now: t0, Interval: 2}, want: domain.CodeTracingInProgress},
		{name: "edit after expiry", lease: analysis(mine), cmd: domain.EditMarkers{LeaseID: mine, Now: E}, want: domain.CodeLeaseLost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("b%d", i)
			var stored *domain.Movie
			if !tc.absent {
				m := domain.Movie{
					ID: id, Title: "t", FrameCount: 100, FrameRate: 25, Status: domain.StatusReady,
					Settings:  domain.Settings{Markers: []domain.Marker{{ID: "m1", Label: "a", X: 0.5, Y: 0.5}}, Trim: domain.Trim{Start: 10, End: 50}, CaptureInterval: 1},
					Lease:     tc.lease,
					Version:   7,
					UpdatedAt: t0,
				}
				if tc.markers < 0 {
					m.Settings.Markers = []domain.Marker{}
				}
				putRaw(t, client, tables.Movies, m)
				stored = &m
			}
			want, wantErr := domain.Execute(stored, tc.cmd)
			if got := domain.ErrorCode(wantErr); got != tc.want || (got == "" && wantErr != nil) {
				t.Fatalf("domain: %v, want %q", wantErr, tc.want)
			}
			got, err := s.Commit(context.Background(), id, tc.cmd)
			if code := domain.ErrorCode(err); code != tc.want || (code == "" && err != nil) {
				t.Fatalf("store: %v, want %q", err, tc.want)
			}
			if err == nil && !reflect.DeepEqual(schema.NewMovieItem(got), schema.NewMovieItem(want)) {
				t.Fatalf("store wrote %+v, domain %+v", schema.NewMovieItem(got), schema.NewMovieItem(want))
			}
		})
	}
}

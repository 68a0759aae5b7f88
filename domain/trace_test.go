package domain_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

func TestStartTrace(t *testing.T) {
	mine := with(analysing(t, leaseA, alice, t0), trimmed(100, 900), func(m *domain.Movie) {
		m.Progress = domain.Progress{FramesWritten: 7, TotalFrames: 9}
	})
	start := func(leaseID string, from int, now time.Time) domain.StartTrace {
		return domain.StartTrace{LeaseID: leaseID, JobID: job1, User: alice, FromFrame: from, Now: now, Duration: d}
	}
	// released: Alice's browser let go of its lease, the markers stay.
	released := exec(t, mine, domain.Release{LeaseID: leaseA, Now: at(ms)})
	startedBy := func(u domain.User, from int, now time.Time) func(t *testing.T, before, after domain.Movie) {
		return func(t *testing.T, _, after domain.Movie) {
			t.Helper()
			requireLease(t, after, domain.LeaseTracing, job1, u, now, now, d)
			requireStatus(t, after, domain.StatusTracing)
			if after.Lease.Claimed {
				t.Fatal("a new job is already claimed")
			}
			if after.Lease.FromFrame != from {
				t.Fatalf("FromFrame %d, want %d", after.Lease.FromFrame, from)
			}
			if after.Progress != (domain.Progress{}) {
				t.Fatalf("progress %+v, want reset", after.Progress)
			}
		}
	}
	runCases(t, []cmdCase{
		{
			name:  "the holder's live analysis lease is atomically replaced by the tracing lease",
			movie: mine,
			cmd:   start(leaseA, 300, at(time.Minute)),
			check: startedBy(alice, 300, at(time.Minute)),
		},
		{
			name:  "with no lease and no lease ID the trace starts (the API without Analyze open)",
			movie: released,
			cmd:   start("", 100, at(time.Minute)),
			check: startedBy(alice, 100, at(time.Minute)),
		},
		{
			name:  "an expired page's lease ID is lease_lost, even on a free row: it never saw later edits",
			movie: mine,
			cmd:   start(leaseA, 899, at(d)),
			code:  domain.CodeLeaseLost,
		},
		{
			name:  "a stale foreign lease is replaced",
			movie: with(analysing(t, leaseB, bob, t0), trimmed(100, 900)),
			cmd:   start("", 100, at(d)),
			check: startedBy(alice, 100, at(d)),
		},
		{
			// Issue 12 item 10: the abandoned job is the row's last job,
			// failed, in the same write that starts the new one.
			name:  "a stale tracing lease is replaced by the new job, the abandoned one recorded as failed",
			movie: tracing(t, job2, t0),
			cmd:   start("", 0, at(d)),
			check: func(t *testing.T, before, after domain.Movie) {
				startedBy(alice, 0, at(d))(t, before, after)
				requireAbandoned(t, after, *before.Lease, at(d), domain.QueuedTooLongSummary)
				if after.LastJob.Frames != before.Progress.FramesWritten {
					t.Fatalf("abandoned job frames %d, want %d", after.LastJob.Frames, before.Progress.FramesWritten)
				}
			},
		},
		{
			name:   "another browser's live analysis lease blocks the trace: lease_held",
			movie:  with(analysing(t, leaseB, bob, t0), trimmed(100, 900)),
			cmd:    start(leaseA, 100, at(ms)),
			code:   domain.CodeLeaseHeld,
			holder: storedHolder,
		},
		{
			name:   "the same user's other browser blocks the trace",
			movie:  mine,
			cmd:    start(leaseC, 100, at(ms)),
			code:   domain.CodeLeaseHeld,
			holder: storedHolder,
		},
		{
			name:   "without a lease ID the caller does not own the live lease, even its own user's",
			movie:  mine,
			cmd:    start("", 100, at(ms)),
			code:   domain.CodeLeaseHeld,
			holder: storedHolder,
		},
		{
			name:   "a live tracing lease refuses with tracing_in_progress",
			movie:  tracing(t, job2, t0),
			cmd:    start(leaseA, 0, at(ms)),
			code:   domain.CodeTracingInProgress,
			holder: storedHolder,
		},
		{
			name:   "a live tracing lease refuses even when the lease ID equals its job ID",
			movie:  tracing(t, job2, t0),
			cmd:    start(job2, 0, at(ms)),
			code:   domain.CodeTracingInProgress,
			holder: storedHolder,
		},
		{
			name:  "a movie without markers cannot be traced",
			movie: with(mine, noMarkers),
			cmd:   start(leaseA, 100, at(ms)),
			code:  domain.CodeInvalid,
			field: "markers",
		},
		{name: "fromFrame == Trim.Start is accepted", movie: mine, cmd: start(leaseA, 100, at(ms))},
		{name: "fromFrame == Trim.End-1 is accepted", movie: mine, cmd: start(leaseA, 899, at(ms))},
		{name: "fromFrame below Trim.Start is invalid", movie: mine, cmd: start(leaseA, 99, at(ms)), code: domain.CodeInvalid, field: "fromFrame"},
		{name: "fromFrame == Trim.End is invalid", movie: mine, cmd: start(leaseA, 900, at(ms)), code: domain.CodeInvalid, field: "fromFrame"},
		{name: "a negative fromFrame is invalid input", movie: mine, cmd: start(leaseA, -1, at(ms)), code: domain.CodeInvalid, field: "fromFrame"},
		{name: "fromFrame at MaxFrameCount is invalid input", movie: mine, cmd: start(leaseA, domain.MaxFrameCount, at(ms)), code: domain.CodeInvalid, field: "fromFrame"},
		{
			name:  "an empty job ID is lease_required",
			movie: mine,
			cmd:   domain.StartTrace{LeaseID: leaseA, User: alice, FromFrame: 100, Now: at(ms), Duration: d},
			code:  domain.CodeLeaseRequired,
			field: "jobId",
		},
		{
			name:  "a malformed lease ID is invalid even though an empty one is allowed",
			movie: mine,
			cmd:   start("not-a-lease", 100, at(ms)),
			code:  domain.CodeInvalid,
			field: "leaseId",
		},
		{
			name:  "the initiating user is required",
			movie: mine,
			cmd:   domain.StartTrace{LeaseID: leaseA, JobID: job1, FromFrame: 100, Now: at(ms), Duration: d},
			code:  domain.CodeInvalid,
			field: "user.id",
		},
	})
}

func TestClaimFirstSegment(t *testing.T) {
	queued := tracing(t, job1, t0)
	claim := func(job string, now time.Time) domain.ClaimSegment {
		return domain.ClaimSegment{JobID: job, Now: now, Duration: d}
	}
	runCases(t, []cmdCase{
		{
			name:  "the first claim of the live job marks it claimed and renews the lease",
			movie: queued,
			cmd:   claim(job1, at(time.Minute)),
			check: func(t *testing.T, before, after domain.Movie) {
				requireLease(t, after, domain.LeaseTracing, job1, alice, t0, at(time.Minute), d)
				if !after.Lease.Claimed {
					t.Fatal("not claimed")
				}
				requireStatus(t, after, domain.StatusTracing)
			},
		},
		{
			name:  "a second claim (SQS redelivery) is already_claimed and a no-op",
			movie: claimed(t, job1, t0),
			cmd:   claim(job1, at(time.Minute)),
			code:  domain.CodeAlreadyClaimed,
		},
		{
			name:   "a claim of another job ID is lease_lost",
			movie:  queued,
			cmd:    claim(job2, at(ms)),
			code:   domain.CodeLeaseLost,
			holder: storedHolder,
		},
		{
			name:  "a claim after the lease went stale, nobody having replaced or ended it, revives it",
			movie: queued,
			cmd:   claim(job1, at(d)),
			check: func(t *testing.T, before, after domain.Movie) {
				requireLease(t, after, domain.LeaseTracing, job1, alice, t0, at(d), d)
			},
		},
		{
			name:  "a claim 1ms before expiry still lands",
			movie: queued,
			cmd:   claim(job1, at(d-ms)),
		},
		{
			name:  "a redelivered claim after completion is lease_lost",
			movie: exec(t, claimed(t, job1, t0), domain.CompleteJob{Job: *claimed(t, job1, t0).Lease, Now: at(ms)}),
			cmd:   claim(job1, at(2*ms)),
			code:  domain.CodeLeaseLost,
		},
		{
			name:   "an analysis lease with the job's ID string cannot be claimed",
			movie:  analysing(t, job1, bob, t0),
			cmd:    claim(job1, at(ms)),
			code:   domain.CodeLeaseLost,
			holder: storedHolder,
		},
		{name: "an empty job ID is lease_required", movie: queued, cmd: claim("", at(ms)), code: domain.CodeLeaseRequired, field: "jobId"},
		{name: "a job ID of 31 hex digits is invalid", movie: queued, cmd: claim(job1[1:], at(ms)), code: domain.CodeInvalid, field: "jobId"},
		{name: "a zero duration is invalid", movie: queued, cmd: domain.ClaimSegment{JobID: job1, Now: at(ms)}, code: domain.CodeInvalid, field: "duration"},
	})
}

// fenceCases are the rules of every write a worker makes for its job, for
// the write mk(job, now).
func fenceCases(t *testing.T, mk func(job domain.Lease, now time.Time) domain.Command) []cmdCase {
	running := claimed(t, job1, t0)
	queued := tracing(t, job1, t0)
	other := claimed(t, job2, t0)
	// A new trace that took over the stale lease recorded the old job as
	// failed (issue 12 item 10) with its own summary: the old job's late
	// writes, its failure included, are fenced out, not answered as done.
	takenOver := exec(t, running, domain.StartTrace{JobID: job2, User: bob, Now: at(d), Duration: d})
	return []cmdCase{
		{
			name:   "a new trace's lease fences the old job out after its lease went stale",
			movie:  takenOver,
			cmd:    mk(*running.Lease, at(d+ms)),
			code:   domain.CodeLeaseLost,
			holder: storedHolder,
		},
		{
			name:   "an unclaimed job cannot write: lease_lost",
			movie:  queued,
			cmd:    mk(*queued.Lease, at(ms)),
			code:   domain.CodeLeaseLost,
			holder: storedHolder,
		},
		{
			name:   "a job whose lease went stale (at ExpiresAt) cannot write",
			movie:  running,
			cmd:    mk(*running.Lease, running.Lease.ExpiresAt),
			code:   domain.CodeLeaseLost,
			holder: noHolder,
		},
		{
			name:   "another job's live lease fences the write",
			movie:  other,
			cmd:    mk(*running.Lease, at(ms)),
			code:   domain.CodeLeaseLost,
			holder: storedHolder,
		},
		{
			name:   "an analysis lease with the job's ID string fences the write",
			movie:  analysing(t, job1, bob, t0),
			cmd:    mk(*running.Lease, at(ms)),
			code:   domain.CodeLeaseLost,
			holder: storedHolder,
		},
		{
			name:   "with no lease the write is lease_lost",
			movie:  with(running, func(m *domain.Movie) { m.Lease = nil }),
			cmd:    mk(*running.Lease, at(ms)),
			code:   domain.CodeLeaseLost,
			holder: noHolder,
		},
		{
			name:  "an empty job ID is lease_required",
			movie: running,
			cmd:   mk(domain.Lease{}, at(ms)),
			code:  domain.CodeLeaseRequired,
			field: "jobId",
		},
	}
}

func TestJobFence(t *testing.T) {
	running := claimed(t, job1, t0)
	for _, tc := range []struct {
		name string
		m    domain.Movie
		f    domain.JobFence
		code domain.Code
	}{
		{"the claimed live job passes", running, domain.JobFence{JobID: job1, Now: at(d - ms)}, ""},
		{"the claimed job at ExpiresAt is fenced", running, domain.JobFence{JobID: job1, Now: at(d)}, domain.CodeLeaseLost},
		{"an unclaimed job is fenced", tracing(t, job1, t0), domain.JobFence{JobID: job1, Now: at(ms)}, domain.CodeLeaseLost},
		{"another job is fenced", running, domain.JobFence{JobID: job2, Now: at(ms)}, domain.CodeLeaseLost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.f.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			err := domain.Decide(tc.f, &tc.m)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("Decide: %v", err)
				}
				return
			}
			RequireCode(t, err, tc.code, "")
		})
	}
}

func TestBeginTrace(t *testing.T) {
	running := with(claimed(t, job1, t0), cleanBefore(700))
	begin := func(job domain.Lease, now time.Time) domain.Command {
		return domain.BeginTrace{JobFence: domain.JobFence{JobID: job.ID, Now: now}, Duration: d, CleanBefore: 300, TotalFrames: 600}
	}
	cases := append(fenceCases(t, begin),
		cmdCase{
			name:  "the claimed job records its plan: CleanBefore drops to the retrace frame, progress restarts",
			movie: running,
			cmd:   begin(*running.Lease, at(time.Minute)),
			check: func(t *testing.T, _, after domain.Movie) {
				requireLease(t, after, domain.LeaseTracing, job1, alice, t0, at(time.Minute), d)
				if after.CleanBefore != 300 {
					t.Fatalf("CleanBefore %d, want 300", after.CleanBefore)
				}
				if after.Progress != (domain.Progress{TotalFrames: 600}) {
					t.Fatalf("progress %+v", after.Progress)
				}
				if !after.Lease.Claimed {
					t.Fatal("renewing dropped the claim")
				}
			},
		},
		cmdCase{
			name:  "a negative plan is invalid",
			movie: running,
			cmd:   domain.BeginTrace{JobFence: domain.JobFence{JobID: job1, Now: at(ms)}, Duration: d, CleanBefore: -1},
			code:  domain.CodeInvalid,
			field: "plan",
		},
	)
	runCases(t, cases)
}

func TestRenewJob(t *testing.T) {
	running := exec(t, claimed(t, job1, t0), domain.BeginTrace{JobFence: domain.JobFence{JobID: job1, Now: t0}, Duration: d, TotalFrames: 50})
	renew := func(job domain.Lease, now time.Time) domain.Command {
		return domain.RenewJob{JobFence: domain.JobFence{JobID: job.ID, Now: now}, Duration: d, FramesWritten: 20}
	}
	cases := append(fenceCases(t, renew),
		cmdCase{
			name:  "the claimed job renews one duration from now and publishes progress",
			movie: running,
			cmd:   renew(*running.Lease, at(d-ms)),
			check: func(t *testing.T, _, after domain.Movie) {
				requireLease(t, after, domain.LeaseTracing, job1, alice, t0, at(d-ms), d)
				if after.Progress != (domain.Progress{FramesWritten: 20, TotalFrames: 50}) {
					t.Fatalf("progress %+v", after.Progress)
				}
				if !after.Lease.Claimed {
					t.Fatal("renewing dropped the claim")
				}
			},
		},
		cmdCase{
			name:  "negative progress is invalid",
			movie: running,
			cmd:   domain.RenewJob{JobFence: domain.JobFence{JobID: job1, Now: at(ms)}, Duration: d, FramesWritten: -1},
			code:  domain.CodeInvalid,
			field: "framesWritten",
		},
	)
	runCases(t, cases)

	t.Run("renewals keep a job alive past its first expiry", func(t *testing.T) {
		m := running
		for i := 1; i <= 5; i++ {
			m = exec(t, m, domain.RenewJob{JobFence: domain.JobFence{JobID: job1, Now: at(time.Duration(i) * (d - ms))}, Duration: d, FramesWritten: i})
		}
		if !m.Lease.LiveAt(at(5 * d)) {
			t.Fatal("renewed job is not live")
		}
	})
}

// requireOutcome checks the LastJob a terminal write of job stores.
func requireOutcome(t *testing.T, after domain.Movie, job domain.Lease, status domain.Status, now time.Time, frames int, summary string) {
	t.Helper()
	want := domain.JobRecord{
		JobID: job.ID, Status: status, UserID: job.UserID, UserName: job.UserName,
		FromFrame: job.FromFrame, StartedAt: job.AcquiredAt, FinishedAt: now,
		Frames: frames, FailureSummary: summary,
	}
	if after.LastJob == nil || !reflect.DeepEqual(*after.LastJob, want) {
		t.Fatalf("LastJob %+v, want %+v", after.LastJob, want)
	}
	requireNoLease(t, after)
	requireStatus(t, after, status)
	if after.Progress.FramesWritten != frames {
		t.Fatalf("FramesWritten %d, want %d", after.Progress.FramesWritten, frames)
	}
}

func TestCompleteJob(t *testing.T) {
	running := exec(t, claimed(t, job1, t0), domain.BeginTrace{JobFence: domain.JobFence{JobID: job1, Now: t0}, Duration: d, TotalFrames: 1000})
	complete := func(job domain.Lease, now time.Time) domain.Command {
		return domain.CompleteJob{Job: job, Now: now, FramesWritten: 1000}
	}
	trimmed := trimmedRunning(t)
	cases := append(fenceCases(t, complete),
		cmdCase{
			name:  "the claimed job publishes traced, deletes its own lease and records LastJob",
			movie: running,
			cmd:   complete(*running.Lease, at(time.Minute)),
			check: func(t *testing.T, _, after domain.Movie) {
				requireOutcome(t, after, *running.Lease, domain.StatusTraced, at(time.Minute), 1000, "")
				if after.CleanBefore != 1000 {
					t.Fatalf("CleanBefore %d, want 1000", after.CleanBefore)
				}
				if after.Progress.TotalFrames != 1000 {
					t.Fatalf("TotalFrames %d, want kept", after.Progress.TotalFrames)
				}
			},
		},
		cmdCase{
			name:  "a narrowed trim: CleanBefore is the stored trim's end, whatever frames were written",
			movie: trimmed,
			cmd:   domain.CompleteJob{Job: *trimmed.Lease, Now: at(time.Minute), FramesWritten: 7},
			check: func(t *testing.T, _, after domain.Movie) {
				if after.CleanBefore != 640 {
					t.Fatalf("CleanBefore %d, want the trim's end 640", after.CleanBefore)
				}
			},
		},
		cmdCase{
			name:  "negative FramesWritten is invalid",
			movie: running,
			cmd:   domain.CompleteJob{Job: *running.Lease, Now: at(ms), FramesWritten: -1},
			code:  domain.CodeInvalid,
		},
	)
	runCases(t, cases)
}

// trimmedRunning is job1 running on a movie whose trim Alice narrowed to
// [10, 640) before starting it from frame 20, its plan recorded.
func trimmedRunning(t *testing.T) domain.Movie {
	t.Helper()
	m := exec(t, analysing(t, leaseA, alice, t0), domain.EditTrim{LeaseID: leaseA, Now: t0, Trim: domain.Trim{Start: 10, End: 640}})
	m = exec(t, m, domain.StartTrace{LeaseID: leaseA, JobID: job1, User: alice, FromFrame: 20, Now: t0, Duration: d})
	m = exec(t, m, domain.ClaimSegment{JobID: job1, Now: t0, Duration: d})
	return exec(t, m, domain.BeginTrace{JobFence: domain.JobFence{JobID: job1, Now: t0}, Duration: d, CleanBefore: 0, TotalFrames: 630})
}

func TestFailJob(t *testing.T) {
	running := claimed(t, job1, t0)
	fail := func(job domain.Lease, now time.Time) domain.Command {
		return domain.FailJob{Job: job, Now: now, FramesWritten: 3, Summary: "Marker m1 left the frame at 412"}
	}
	hostile := "open /var/task/main.go:12: password=hunter2 lease " + job1 + "\ngoroutine 1 [running]:\nmain.main()"
	cases := append(fenceCases(t, fail),
		cmdCase{
			name:  "the claimed job publishes tracing_failed with its summary and deletes its own lease",
			movie: running,
			cmd:   fail(*running.Lease, at(time.Minute)),
			check: func(t *testing.T, _, after domain.Movie) {
				requireOutcome(t, after, *running.Lease, domain.StatusFailed, at(time.Minute), 3, "Marker m1 left the frame at 412")
			},
		},
		cmdCase{
			name:  "the stored summary is sanitized whatever the worker sent",
			movie: running,
			cmd:   domain.FailJob{Job: *running.Lease, Now: at(ms), Summary: hostile},
			check: func(t *testing.T, _, after domain.Movie) {
				got := after.LastJob.FailureSummary
				if got != domain.SanitizeSummary(hostile) || got != (domain.FailJob{Summary: hostile}).SafeSummary() {
					t.Fatalf("summary %q is not the sanitized text", got)
				}
				for _, secret := range []string{"/var/task", "main.go", "hunter2", job1, "goroutine", "\n"} {
					if strings.Contains(got, secret) {
						t.Fatalf("summary %q contains %q", got, secret)
					}
				}
			},
		},
		cmdCase{
			name:  "an empty summary is stored as the generic one",
			movie: running,
			cmd:   domain.FailJob{Job: *running.Lease, Now: at(ms)},
			check: func(t *testing.T, _, after domain.Movie) {
				if after.LastJob.FailureSummary != domain.GenericFailureSummary {
					t.Fatalf("summary %q", after.LastJob.FailureSummary)
				}
			},
		},
		cmdCase{
			name:  "negative progress is invalid",
			movie: running,
			cmd:   domain.FailJob{Job: *running.Lease, Now: at(ms), FramesWritten: -1},
			code:  domain.CodeInvalid,
			field: "framesWritten",
		},
	)
	runCases(t, cases)
}

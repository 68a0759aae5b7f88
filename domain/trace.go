package domain

import "time"

// The commands of a trace: start it (replacing the caller's analysis lease),
// claim it once, record its plan and progress, and finish it. Every write a
// worker makes after its claim is fenced on its job's claimed live lease.

// lostAt explains a refusal whose cause is that the caller's lease is not the
// live one.
func lostAt(now time.Time) func(Movie) error {
	return func(m Movie) error { return leaseLost(m, now) }
}

// StartTrace atomically replaces the caller's analysis lease with a new
// tracing lease whose ID is the job ID, and sets status tracing.
//
// Precondition: with a LeaseID, the live lease is the analysis lease with
// that ID and the caller's user (an expired page's lease ID is refused
// lease_lost, never treated as "no lease": that page never saw the settings
// edited since); without one, there is no live lease. The movie has at least
// one marker; Trim.Start <= FromFrame < Trim.End.
type StartTrace struct {
	LeaseID   string // the caller's analysis lease, "" if it has none
	JobID     string
	User      User
	FromFrame int
	Now       time.Time
	Duration  time.Duration
}

func (c StartTrace) Validate() error {
	var lease error
	if c.LeaseID != "" {
		lease = validateLeaseID("leaseId", c.LeaseID)
	}
	var from error
	if c.FromFrame < 0 || c.FromFrame >= MaxFrameCount {
		from = Invalid("fromFrame", "must be 0-%d", MaxFrameCount-1)
	}
	return firstError(lease, validateLeaseID("jobId", c.JobID), validateUser(c.User), from, validateDuration(c.Duration))
}

// Precondition: base, and (without a LeaseID) the stale lease replaced is
// not a tracing lease; over one, the start takes it over (Successor),
// recording the abandoned job as the row's last job, failed.
func (c StartTrace) Precondition() []Clause {
	pre := c.base()
	if c.LeaseID == "" {
		pre = append(pre, noStaleTrace(c.Now))
	}
	return pre
}

// Successor: over a stale tracing lease, the takeover that records its job
// as failed and starts this one in the same write.
func (c StartTrace) Successor(m Movie) (Command, bool) {
	if c.LeaseID != "" {
		return nil, false
	}
	return staleTraceSuccessor(c, c.Now, m)
}

func (c StartTrace) base() []Clause {
	owner := Clause{If: NoLiveLease(c.Now), Else: func(m Movie) error { return blockedBy(m.Lease) }}
	if c.LeaseID != "" {
		owner = editGuard(c.LeaseID, c.User.ID, c.Now)
	}
	return []Clause{
		owner,
		{If: HasMarkers(), Else: func(Movie) error {
			return Invalid("markers", "place at least one marker before tracing")
		}},
		{If: TrimContains(c.FromFrame), Else: func(m Movie) error {
			return Invalid("fromFrame", "must be within the trim [%d, %d)", m.Settings.Trim.Start, m.Settings.Trim.End)
		}},
	}
}

// AlreadyApplied: this very job started (its tracing lease is on the row, or it has
// already finished).
func (c StartTrace) AlreadyApplied() Cond {
	return Or{And{Cmp(FieldLeaseKind, OpEq, LeaseTracing), Cmp(FieldLeaseID, OpEq, c.JobID)}, Cmp(FieldLastJobID, OpEq, c.JobID)}
}

func (c StartTrace) Update() []Assignment {
	return changed(c.Now,
		Set(FieldLease, Lease{
			Kind: LeaseTracing, ID: c.JobID, UserID: c.User.ID, UserName: c.User.Name,
			AcquiredAt: c.Now, HeartbeatAt: c.Now, ExpiresAt: c.Now.Add(c.Duration),
			FromFrame: c.FromFrame,
		}),
		Set(FieldStatus, StatusTracing), Set(FieldFramesWritten, 0), Set(FieldTotalFrames, 0),
	)
}

// claimed is the update of a claim (ClaimSegment): the lease
// renewed for one duration, marked claimed, and stamped with the claiming
// attempt's token (if any) so that a retry of that attempt is recognised.
func claimed(now time.Time, d time.Duration, token string) []Assignment {
	u := append(renewed(now, d), Set(FieldLeaseClaimed, true))
	if token != "" {
		u = append(u, Set(FieldLeaseClaimToken, token))
	}
	return changed(now, u...)
}

// JobFence guards every write a worker makes for its job (frames, progress,
// terminal state). Precondition: the live lease is the claimed tracing lease
// with JobID. A worker that lost its lease can therefore write nothing.
type JobFence struct {
	JobID string
	Now   time.Time
}

func (c JobFence) Validate() error { return validateLeaseID("jobId", c.JobID) }

func (c JobFence) Precondition() []Clause {
	return []Clause{{If: And{LeaseIs(LeaseTracing, c.JobID, c.Now), Claimed(true)}, Else: lostAt(c.Now)}}
}

// BeginTrace records the claimed job's plan before it touches any frame:
// the frame it retraces from (which becomes CleanBefore, so a crash leaves no
// clean-looking frame of this job) and the number of frames to write.
// Precondition: JobFence.
type BeginTrace struct {
	JobFence
	Duration    time.Duration
	CleanBefore int
	TotalFrames int
	// PlanFrom is the plan's first frame (TracePlan.From), recorded on the
	// lease (Lease.PlanFrom) as the job's range for every later reader.
	PlanFrom int
}

func (c BeginTrace) Validate() error {
	var plan error
	if c.CleanBefore < 0 || c.TotalFrames < 0 || c.PlanFrom < 0 {
		plan = Invalid("plan", "frame numbers must not be negative")
	}
	return firstError(c.JobFence.Validate(), validateDuration(c.Duration), plan)
}

func (c BeginTrace) same() Cond {
	return And{sameRenewal(c.Now, c.Duration), Cmp(FieldCleanBefore, OpEq, c.CleanBefore),
		Cmp(FieldFramesWritten, OpEq, 0), Cmp(FieldTotalFrames, OpEq, c.TotalFrames), Cmp(FieldLeasePlanFrom, OpEq, c.PlanFrom)}
}

func (c BeginTrace) Precondition() []Clause {
	return append(c.JobFence.Precondition(), unchanged(c.same()))
}

// AlreadyApplied: the fence holds and this very plan was already recorded (a retried
// request).
func (c BeginTrace) AlreadyApplied() Cond { return And{Condition(c.JobFence), c.same()} }

func (c BeginTrace) Update() []Assignment {
	return changed(c.Now, append(renewed(c.Now, c.Duration),
		Set(FieldCleanBefore, c.CleanBefore), Set(FieldFramesWritten, 0), Set(FieldTotalFrames, c.TotalFrames),
		Set(FieldLeasePlanFrom, c.PlanFrom))...)
}

// RenewJob heartbeats the tracing lease and publishes progress.
// Precondition: JobFence.
type RenewJob struct {
	JobFence
	Duration      time.Duration
	FramesWritten int
}

func (c RenewJob) Validate() error {
	var n error
	if c.FramesWritten < 0 {
		n = Invalid("framesWritten", "must not be negative")
	}
	return firstError(c.JobFence.Validate(), validateDuration(c.Duration), n)
}

func (c RenewJob) same() Cond {
	return And{sameRenewal(c.Now, c.Duration), Cmp(FieldFramesWritten, OpEq, c.FramesWritten)}
}

func (c RenewJob) Precondition() []Clause {
	return append(c.JobFence.Precondition(), unchanged(c.same()))
}

// AlreadyApplied: the fence holds and this very renewal was already made (a retried
// request).
func (c RenewJob) AlreadyApplied() Cond { return And{Condition(c.JobFence), c.same()} }

func (c RenewJob) Update() []Assignment {
	return changed(c.Now, append(renewed(c.Now, c.Duration), Set(FieldFramesWritten, c.FramesWritten))...)
}

// finish is the terminal write shared by CompleteJob and FailJob: the job's
// own lease is removed and the outcome recorded. Job is the lease as the
// worker claimed it; the fence guarantees it is still the stored one.
func finish(job Lease, now time.Time, frames int, status Status, summary string, more ...Assignment) []Assignment {
	return changed(now, append(more,
		Remove(FieldLease), Set(FieldStatus, status), Set(FieldFramesWritten, frames),
		Set(FieldLastJob, job.Outcome(now, status, frames, summary)))...)
}

// finished holds when the row's recorded last job is jobID with status.
func finished(jobID string, status Status) Cond {
	return And{Cmp(FieldLastJobID, OpEq, jobID), Cmp(FieldLastJobStatus, OpEq, status)}
}

// CompleteJob publishes status traced and deletes only the job's own lease.
// Precondition: JobFence. CleanBefore becomes the end of the traced range,
// which the rule reads from the row, not from the worker: every plan
// (PlanTrace, ResumePlan) ends at the trim's end, and the trim cannot change
// while the job holds the lease (edits need the analysis lease), so the
// stored Trim.End is the end of what this job traced.
type CompleteJob struct {
	Job           Lease
	Now           time.Time
	FramesWritten int
	// Quality is each marker's quality over the traced frames
	// (TraceQuality), recorded with the job; nil when unknown.
	Quality []MarkerQuality
}

func (c CompleteJob) fence() JobFence { return JobFence{JobID: c.Job.ID, Now: c.Now} }

func (c CompleteJob) Validate() error {
	var n error
	if c.FramesWritten < 0 {
		n = Invalid("framesWritten", "must not be negative")
	}
	return firstError(c.fence().Validate(), n, ValidateQuality(c.Quality))
}

func (c CompleteJob) Precondition() []Clause { return c.fence().Precondition() }

// AlreadyApplied: the row records this job as traced.
func (c CompleteJob) AlreadyApplied() Cond { return finished(c.Job.ID, StatusTraced) }

func (c CompleteJob) Update() []Assignment {
	rec := c.Job.Outcome(c.Now, StatusTraced, c.FramesWritten, "")
	if len(c.Quality) > 0 {
		rec.Quality = c.Quality
	}
	return changed(c.Now, Copy(FieldCleanBefore, FieldTrimEnd),
		Remove(FieldLease), Set(FieldStatus, StatusTraced), Set(FieldFramesWritten, c.FramesWritten), Set(FieldLastJob, rec))
}

// FailJob publishes status tracing_failed with a sanitized summary and
// deletes only the job's own lease. Precondition: JobFence.
type FailJob struct {
	Job           Lease
	Now           time.Time
	FramesWritten int
	Summary       string
}

func (c FailJob) fence() JobFence { return JobFence{JobID: c.Job.ID, Now: c.Now} }

func (c FailJob) Validate() error {
	var n error
	if c.FramesWritten < 0 {
		n = Invalid("framesWritten", "must not be negative")
	}
	return firstError(c.fence().Validate(), n)
}

func (c FailJob) Precondition() []Clause { return c.fence().Precondition() }

// AlreadyApplied: the row records this job as failed with this very summary. A
// failure recorded by someone else (a takeover of the job's stale lease,
// the sweeper) has its own summary, so the job's late FailJob is refused
// (lease_lost) rather than answered with a write it did not make.
func (c FailJob) AlreadyApplied() Cond {
	return And{finished(c.Job.ID, StatusFailed), Cmp(FieldLastJobSummary, OpEq, c.SafeSummary())}
}

func (c FailJob) Update() []Assignment {
	return finish(c.Job, c.Now, c.FramesWritten, StatusFailed, c.SafeSummary())
}

// SafeSummary is the summary as stored: sanitized, whatever the worker sent.
func (c FailJob) SafeSummary() string { return SanitizeSummary(c.Summary) }

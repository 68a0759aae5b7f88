package domain

import (
	"fmt"
	"time"
)

// Segments: a trace longer than one worker invocation runs as segments. The
// worker of segment k checkpoints (its frames are durable and counted in
// Progress.FramesWritten) and hands the job off (HandOffJob): the lease stays
// the job's, unclaimed, with Segment k+1, and a continuation message names
// segment k+1. ClaimSegment claims each segment exactly once. A stale lease
// nobody replaced and nobody claimed may still be claimed: a job that waited
// in the queue longer than its lease runs instead of dying silently; if a
// sweeper got there first (FinalizeStaleTrace), the job has ended visibly and
// the claim is refused.

// QueuedTooLongSummary is the failure summary of a job whose lease went
// stale before any worker claimed it (the queue was backed up).
const QueuedTooLongSummary = "The trace waited in the queue longer than its lease and never started. Start it again."

// SegmentIs holds when the stored lease's segment is n. Segment 0 is an
// absent segment (OmittedWhenZero), in the domain as in the store.
func SegmentIs(n int) Cond {
	if n == 0 {
		return Absent{FieldLeaseSegment}
	}
	return Cmp(FieldLeaseSegment, OpEq, n)
}

// namesJob holds when the stored lease is the tracing lease of job, live or
// stale: nobody replaced or ended it (both change or remove the lease).
func namesJob(job string) Cond {
	return And{Cmp(FieldLeaseKind, OpEq, LeaseTracing), Cmp(FieldLeaseID, OpEq, job)}
}

func segmentClaimed(n int) func(Movie) error {
	return func(Movie) error {
		return &Error{Code: CodeAlreadyClaimed, Message: fmt.Sprintf("segment %d of the job was already claimed", n)}
	}
}

// ClaimSegment is a worker taking segment Segment of a queued job: 0 for the
// job's first message, k for the k-th continuation.
//
// Precondition: the stored lease is the job's tracing lease (live, or stale
// but neither replaced nor ended), unclaimed, at segment Segment. Exactly one
// claim per segment succeeds: a redelivered or duplicated message is refused
// (CodeAlreadyClaimed or CodeLeaseLost) and is a no-op. The claim renews the
// lease, so a job revived after a long queue wait gets a whole lease.
type ClaimSegment struct {
	JobID   string
	Segment int
	// Token is the claim attempt's random token, one per delivery of the
	// message ("": the claim cannot be recognised when retried): a retried
	// request of the claiming attempt is recognised by it (AlreadyApplied), while a
	// redelivery, with its own token, is not.
	Token    string
	Now      time.Time
	Duration time.Duration
}

func (c ClaimSegment) Validate() error {
	var seg error
	if c.Segment < 0 {
		seg = Invalid("segment", "must not be negative")
	}
	var token error
	if c.Token != "" {
		token = validateLeaseID("claimToken", c.Token)
	}
	return firstError(validateLeaseID("jobId", c.JobID), seg, token, validateDuration(c.Duration))
}

// AlreadyApplied: this segment was claimed by this very attempt (same token).
func (c ClaimSegment) AlreadyApplied() Cond {
	if c.Token == "" {
		return Or{}
	}
	return And{namesJob(c.JobID), Claimed(true), SegmentIs(c.Segment), Cmp(FieldLeaseClaimToken, OpEq, c.Token)}
}

func (c ClaimSegment) Precondition() []Clause {
	return []Clause{
		{If: namesJob(c.JobID), Else: lostAt(c.Now)},
		{If: And{Claimed(false), SegmentIs(c.Segment)}, Else: segmentClaimed(c.Segment)},
	}
}

func (c ClaimSegment) Update() []Assignment { return claimed(c.Now, c.Duration, c.Token) }

// HandOffJob ends segment Segment of a claimed job before its worker's
// invocation ends: the progress is the checkpoint (FramesWritten durable
// frames), the lease stays the job's but unclaimed at Segment+1, renewed
// for one duration so that the continuation can claim it.
//
// CleanBefore becomes the checkpoint's frame (the plan's frame number
// FramesWritten): every frame below it is this job's and durable, so if the
// job later fails or dies, a retrace with the same settings resumes there
// (PlanTrace starts at min(fromFrame, CleanBefore)), and the continuation
// derives its plan from the row (ResumePlan).
// Precondition: JobFence, and the stored segment is Segment.
type HandOffJob struct {
	JobFence
	Segment       int
	Duration      time.Duration
	FramesWritten int
	CleanBefore   int
}

func (c HandOffJob) Validate() error {
	var n error
	switch {
	case c.Segment < 0:
		n = Invalid("segment", "must not be negative")
	case c.FramesWritten < 0:
		n = Invalid("framesWritten", "must not be negative")
	case c.CleanBefore < 0:
		n = Invalid("cleanBefore", "must not be negative")
	}
	return firstError(c.JobFence.Validate(), validateDuration(c.Duration), n)
}

// AlreadyApplied: the row shows this very hand-off (the job's
// lease unclaimed at the next segment, renewed at Now, the checkpoint
// recorded): a retried request whose first answer was lost.
func (c HandOffJob) AlreadyApplied() Cond {
	return And{namesJob(c.JobID), Claimed(false), SegmentIs(c.Segment + 1),
		Cmp(FieldFramesWritten, OpEq, c.FramesWritten), sameRenewal(c.Now, c.Duration)}
}

func (c HandOffJob) Precondition() []Clause {
	return append(c.JobFence.Precondition(), Clause{If: SegmentIs(c.Segment), Else: lostAt(c.Now)})
}

func (c HandOffJob) Update() []Assignment {
	return changed(c.Now, append(renewed(c.Now, c.Duration),
		Set(FieldLeaseClaimed, false), Set(FieldLeaseSegment, c.Segment+1), Set(FieldFramesWritten, c.FramesWritten),
		Set(FieldCleanBefore, c.CleanBefore))...)
}

// ResumePlan is the plan of a handed-off job as its continuation finds it on
// the row: it started FramesWritten capture intervals before the checkpoint
// frame CleanBefore, ends at the trim's end and writes TotalFrames frames.
// It fails if the row does not describe such a plan, or if that plan's
// start disagrees with the one BeginTrace recorded on the job's lease
// (Lease.PlanFrom): a continuation then fails visibly instead of tracing
// a range its history would not state. A row written before PlanFrom was
// recorded reads PlanFrom 0; its start is not cross-checked (a recorded
// plan from frame 0 is indistinguishable from it, and always agrees when
// the checkpoint says 0).
func ResumePlan(m Movie) (TracePlan, error) {
	s := m.Settings
	interval := max(s.CaptureInterval, 1)
	from := m.CleanBefore - m.Progress.FramesWritten*interval
	p := TracePlan{ClearFrom: from, From: from, End: s.Trim.End, Interval: interval, Frames: m.Progress.TotalFrames}
	want := 0
	if p.End > from {
		want = (p.End - from + interval - 1) / interval
	}
	if from < s.Trim.Start || (from-s.Trim.Start)%interval != 0 || p.Frames != want || m.Progress.FramesWritten > p.Frames {
		return TracePlan{}, fmt.Errorf("domain: the row's checkpoint (clean before %d, %d of %d frames) fits no plan in trim [%d, %d) every %d",
			m.CleanBefore, m.Progress.FramesWritten, m.Progress.TotalFrames, s.Trim.Start, s.Trim.End, interval)
	}
	if l := m.Lease; l != nil && l.Kind == LeaseTracing && l.PlanFrom != 0 && l.PlanFrom != from {
		return TracePlan{}, fmt.Errorf("domain: the row's checkpoint (clean before %d after %d frames every %d) puts the plan's start at %d, but the job recorded %d",
			m.CleanBefore, m.Progress.FramesWritten, interval, from, l.PlanFrom)
	}
	return p, nil
}

// FinalizeStaleTrace ends a trace whose tracing lease went stale and that
// nobody took over: status tracing_failed, the lease removed, the job
// recorded with its durable progress and a summary saying why (never
// claimed: QueuedTooLongSummary; claimed: StalledSummary). The sweeper reads
// the row and passes the lease and progress it saw.
//
// Precondition: the stored lease is Job (same ID, claim and segment), stale
// at Now, and the progress is FramesWritten. A job revived or renewed in the
// meantime is no longer stale, so it is left alone.
type FinalizeStaleTrace struct {
	Job           Lease
	FramesWritten int
	Now           time.Time
}

func (c FinalizeStaleTrace) Validate() error {
	var n error
	if c.FramesWritten < 0 {
		n = Invalid("framesWritten", "must not be negative")
	}
	return firstError(validateLeaseID("jobId", c.Job.ID), n)
}

// AlreadyApplied: the row already records this job as
// failed (a retried finalize, or the worker's own FailJob).
func (c FinalizeStaleTrace) AlreadyApplied() Cond { return finished(c.Job.ID, StatusFailed) }

func (c FinalizeStaleTrace) Precondition() []Clause {
	return []Clause{{
		If: And{TraceStale(c.Now), Cmp(FieldLeaseID, OpEq, c.Job.ID), Claimed(c.Job.Claimed), SegmentIs(c.Job.Segment),
			Cmp(FieldFramesWritten, OpEq, c.FramesWritten)},
		Else: lostAt(c.Now),
	}}
}

// Summary is the failure summary the command records.
func (c FinalizeStaleTrace) Summary() string {
	if !c.Job.Claimed {
		return QueuedTooLongSummary
	}
	return StalledSummary
}

func (c FinalizeStaleTrace) Update() []Assignment {
	return finish(c.Job, c.Now, c.FramesWritten, StatusFailed, c.Summary())
}

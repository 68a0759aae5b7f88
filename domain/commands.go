package domain

import (
	"slices"
	"time"
)

// Command is one transition of a movie.
//
// Validate checks the input alone (no state). Decide checks the precondition
// against the movie as stored: nil means the write is legal. Apply returns the
// next movie and must only be called after Decide returned nil. A storage
// adapter commits Apply as one conditional write whose condition is Decide.
type Command interface {
	Validate() error
	Decide(m Movie) error
	Apply(m Movie) Movie
}

// Execute runs a command against a movie (nil: the movie does not exist) and
// returns the next movie or the refusal. It is the reference semantics the
// store's conditional writes are tested against.
func Execute(m *Movie, c Command) (Movie, error) {
	if err := c.Validate(); err != nil {
		// Like every other refusal, an invalid command returns the movie
		// unchanged (it used to return Movie{}, so a caller writing
		// m, err = Execute(&m, c) lost its movie on bad input).
		if m != nil {
			return *m, err
		}
		return Movie{}, err
	}
	if m == nil {
		return Movie{}, notFound()
	}
	if err := c.Decide(*m); err != nil {
		return *m, err
	}
	return c.Apply(*m), nil
}

// changed is the bookkeeping of every committed change: one more version.
func changed(m Movie, now time.Time) Movie {
	m.Version++
	m.UpdatedAt = now
	return m
}

func renewed(l Lease, now time.Time, d time.Duration) *Lease {
	l.HeartbeatAt = now
	l.ExpiresAt = now.Add(d)
	return &l
}

// OpenAnalysis acquires the analysis lease when Analyze opens.
//
// Precondition: no live lease. A second browser is refused even for the same
// user, because the lease belongs to a page, not a person. A stale lease of
// either kind is replaced.
type OpenAnalysis struct {
	LeaseID  string
	User     User
	Now      time.Time
	Duration time.Duration
}

func (c OpenAnalysis) Validate() error {
	return firstError(validateLeaseID("leaseId", c.LeaseID), validateUser(c.User), validateDuration(c.Duration))
}

func (c OpenAnalysis) Decide(m Movie) error {
	if l := m.LiveLease(c.Now); l != nil {
		return blockedBy(l)
	}
	return nil
}

func (c OpenAnalysis) Apply(m Movie) Movie {
	m.Lease = &Lease{
		Kind: LeaseAnalysis, ID: c.LeaseID, UserID: c.User.ID, UserName: c.User.Name,
		AcquiredAt: c.Now, HeartbeatAt: c.Now, ExpiresAt: c.Now.Add(c.Duration),
	}
	return changed(m, c.Now)
}

// Heartbeat extends the caller's analysis lease by one duration from now.
//
// Precondition: the live lease is the analysis lease with LeaseID. A stale
// lease cannot be revived: another browser may already have seen it as absent.
type Heartbeat struct {
	LeaseID  string
	Now      time.Time
	Duration time.Duration
}

func (c Heartbeat) Validate() error {
	return firstError(validateLeaseID("leaseId", c.LeaseID), validateDuration(c.Duration))
}

func (c Heartbeat) Decide(m Movie) error {
	if !m.Lease.is(LeaseAnalysis, c.LeaseID, c.Now) {
		return leaseLost(m, c.Now)
	}
	return nil
}

func (c Heartbeat) Apply(m Movie) Movie {
	m.Lease = renewed(*m.Lease, c.Now, c.Duration)
	return changed(m, c.Now)
}

// Release gives up the caller's analysis lease when the page is left.
//
// Precondition: the live lease is the analysis lease with LeaseID. Anything
// else is refused with CodeNotHeld and changes nothing, which is why an old
// page's release can never remove a tracing lease or a newer browser's lease.
// Callers treat CodeNotHeld as success: release is idempotent.
type Release struct {
	LeaseID string
	Now     time.Time
}

func (c Release) Validate() error { return validateLeaseID("leaseId", c.LeaseID) }

func (c Release) Decide(m Movie) error {
	if !m.Lease.is(LeaseAnalysis, c.LeaseID, c.Now) {
		return &Error{Code: CodeNotHeld, Message: "nothing to release"}
	}
	return nil
}

func (c Release) Apply(m Movie) Movie {
	m.Lease = nil
	return changed(m, c.Now)
}

// editGuard is the precondition shared by every settings edit: the live lease
// is the caller's analysis lease. That also rules out editing while tracing,
// since a movie has one lease at a time.
func editGuard(m Movie, leaseID string, now time.Time) error {
	if m.Lease.is(LeaseAnalysis, leaseID, now) {
		return nil
	}
	if l := m.LiveLease(now); l != nil {
		return blockedBy(l)
	}
	return leaseLost(m, now)
}

// EditMarkers replaces the marker list. Precondition: editGuard.
type EditMarkers struct {
	LeaseID string
	Now     time.Time
	Markers []Marker
}

func (c EditMarkers) Validate() error {
	return firstError(validateLeaseID("leaseId", c.LeaseID), ValidateMarkers(c.Markers))
}

func (c EditMarkers) Decide(m Movie) error { return editGuard(m, c.LeaseID, c.Now) }

func (c EditMarkers) Apply(m Movie) Movie {
	m.Settings.Markers = slices.Clone(c.Markers)
	if m.Settings.Markers == nil {
		m.Settings.Markers = []Marker{}
	}
	return changed(m, c.Now)
}

// EditTrim replaces the trimmed range.
//
// Precondition: editGuard, and Trim.End <= FrameCount. Trimming moves the
// capture grid, so no stored frame stays clean (CleanBefore = 0).
type EditTrim struct {
	LeaseID string
	Now     time.Time
	Trim    Trim
}

func (c EditTrim) Validate() error {
	return firstError(validateLeaseID("leaseId", c.LeaseID), ValidateTrim(c.Trim))
}

func (c EditTrim) Decide(m Movie) error {
	if err := editGuard(m, c.LeaseID, c.Now); err != nil {
		return err
	}
	if c.Trim.End > m.FrameCount {
		return Invalid("trim.end", "must not exceed the movie's %d frames", m.FrameCount)
	}
	return nil
}

func (c EditTrim) Apply(m Movie) Movie {
	m.Settings.Trim = c.Trim
	m.CleanBefore = 0
	return changed(m, c.Now)
}

// EditCaptureInterval sets how many frames apart tracing samples.
//
// Precondition: editGuard. A new interval is a new capture grid, so no stored
// frame stays clean (CleanBefore = 0).
type EditCaptureInterval struct {
	LeaseID  string
	Now      time.Time
	Interval int
}

func (c EditCaptureInterval) Validate() error {
	return firstError(validateLeaseID("leaseId", c.LeaseID), ValidateCaptureInterval(c.Interval))
}

func (c EditCaptureInterval) Decide(m Movie) error { return editGuard(m, c.LeaseID, c.Now) }

func (c EditCaptureInterval) Apply(m Movie) Movie {
	m.Settings.CaptureInterval = c.Interval
	m.CleanBefore = 0
	return changed(m, c.Now)
}

// StartTrace atomically replaces the caller's analysis lease with a new
// tracing lease whose ID is the job ID, and sets status tracing.
//
// Precondition: either the live lease is the analysis lease with LeaseID, or
// there is no live lease (LeaseID may then be empty or stale); the movie has
// at least one marker; Trim.Start <= FromFrame < Trim.End.
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

func (c StartTrace) Decide(m Movie) error {
	if l := m.LiveLease(c.Now); l != nil && !(c.LeaseID != "" && l.is(LeaseAnalysis, c.LeaseID, c.Now)) {
		return blockedBy(l)
	}
	if len(m.Settings.Markers) == 0 {
		return Invalid("markers", "place at least one marker before tracing")
	}
	if c.FromFrame < m.Settings.Trim.Start || c.FromFrame >= m.Settings.Trim.End {
		return Invalid("fromFrame", "must be within the trim [%d, %d)", m.Settings.Trim.Start, m.Settings.Trim.End)
	}
	return nil
}

func (c StartTrace) Apply(m Movie) Movie {
	m.Lease = &Lease{
		Kind: LeaseTracing, ID: c.JobID, UserID: c.User.ID, UserName: c.User.Name,
		AcquiredAt: c.Now, HeartbeatAt: c.Now, ExpiresAt: c.Now.Add(c.Duration),
		FromFrame: c.FromFrame,
	}
	m.Status = StatusTracing
	m.Progress = Progress{}
	return changed(m, c.Now)
}

// ClaimJob is a worker taking a queued job.
//
// Precondition: the live lease is the tracing lease with JobID and has not
// been claimed. Exactly one claim per job succeeds; a redelivered message is
// refused (CodeAlreadyClaimed or CodeLeaseLost) and is a no-op.
type ClaimJob struct {
	JobID    string
	Now      time.Time
	Duration time.Duration
}

func (c ClaimJob) Validate() error {
	return firstError(validateLeaseID("jobId", c.JobID), validateDuration(c.Duration))
}

func (c ClaimJob) Decide(m Movie) error {
	if !m.Lease.is(LeaseTracing, c.JobID, c.Now) {
		return leaseLost(m, c.Now)
	}
	if m.Lease.Claimed {
		return &Error{Code: CodeAlreadyClaimed, Message: "the job was already claimed"}
	}
	return nil
}

func (c ClaimJob) Apply(m Movie) Movie {
	l := renewed(*m.Lease, c.Now, c.Duration)
	l.Claimed = true
	m.Lease = l
	return changed(m, c.Now)
}

// JobFence guards every write a worker makes for its job (frames, progress,
// terminal state). Precondition: the live lease is the claimed tracing lease
// with JobID. A worker that lost its lease can therefore write nothing.
type JobFence struct {
	JobID string
	Now   time.Time
}

func (c JobFence) Validate() error { return validateLeaseID("jobId", c.JobID) }

func (c JobFence) Decide(m Movie) error {
	if !m.Lease.is(LeaseTracing, c.JobID, c.Now) || !m.Lease.Claimed {
		return leaseLost(m, c.Now)
	}
	return nil
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
}

func (c BeginTrace) Validate() error {
	var plan error
	if c.CleanBefore < 0 || c.TotalFrames < 0 {
		plan = Invalid("plan", "frame numbers must not be negative")
	}
	return firstError(c.JobFence.Validate(), validateDuration(c.Duration), plan)
}

func (c BeginTrace) Apply(m Movie) Movie {
	m.Lease = renewed(*m.Lease, c.Now, c.Duration)
	m.CleanBefore = c.CleanBefore
	m.Progress = Progress{TotalFrames: c.TotalFrames}
	return changed(m, c.Now)
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

func (c RenewJob) Apply(m Movie) Movie {
	m.Lease = renewed(*m.Lease, c.Now, c.Duration)
	m.Progress.FramesWritten = c.FramesWritten
	return changed(m, c.Now)
}

// Outcome is the job record a terminal write stores for the job whose lease
// this is.
func (l Lease) Outcome(now time.Time, status Status, frames int, summary string) JobRecord {
	return JobRecord{
		JobID: l.ID, Status: status, UserID: l.UserID, UserName: l.UserName,
		FromFrame: l.FromFrame, StartedAt: l.AcquiredAt, FinishedAt: now,
		Frames: frames, FailureSummary: summary,
	}
}

// finish is the terminal write shared by CompleteJob and FailJob: the job's
// own lease is removed and the outcome recorded. Job is the lease as the
// worker claimed it; the fence guarantees it is still the stored one.
func finish(m Movie, job Lease, now time.Time, frames int, status Status, summary string) Movie {
	m.Lease = nil
	m.Status = status
	m.Progress.FramesWritten = frames
	rec := job.Outcome(now, status, frames, summary)
	m.LastJob = &rec
	return changed(m, now)
}

// CompleteJob publishes status traced and deletes only the job's own lease.
// Precondition: JobFence. CleanBefore becomes the end of the traced range.
type CompleteJob struct {
	Job           Lease
	Now           time.Time
	FramesWritten int
	CleanBefore   int
}

func (c CompleteJob) fence() JobFence { return JobFence{JobID: c.Job.ID, Now: c.Now} }

func (c CompleteJob) Validate() error {
	var n error
	switch {
	case c.FramesWritten < 0:
		n = Invalid("framesWritten", "must not be negative")
	case c.CleanBefore < 0:
		n = Invalid("cleanBefore", "must not be negative")
	}
	return firstError(c.fence().Validate(), n)
}

func (c CompleteJob) Decide(m Movie) error { return c.fence().Decide(m) }

func (c CompleteJob) Apply(m Movie) Movie {
	m = finish(m, c.Job, c.Now, c.FramesWritten, StatusTraced, "")
	m.CleanBefore = c.CleanBefore
	return m
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

func (c FailJob) Decide(m Movie) error { return c.fence().Decide(m) }

func (c FailJob) Apply(m Movie) Movie {
	return finish(m, c.Job, c.Now, c.FramesWritten, StatusFailed, c.SafeSummary())
}

// SafeSummary is the summary as stored: sanitized, whatever the worker sent.
func (c FailJob) SafeSummary() string { return SanitizeSummary(c.Summary) }

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

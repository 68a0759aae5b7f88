package domain

import "time"

// One truth for counts (issue 25): every sentence about a movie's frames is
// derived from the facts below, recorded when they are decided.

// TracedFrames is how many traced frames the movie stores: the frames of
// earlier completed traces its last job kept below its plan (KeptFrames,
// recorded by BeginTrace) plus the frames that job wrote (Progress.FramesWritten:
// published while it runs, recorded by its terminal write, and made exact for
// a cancelled job by SettleCancel). A trace clears everything from its plan's
// start, so nothing else is stored (docs/design.md, "Results never mix two
// jobs"). A stalled job's count is its last published progress: frames it wrote
// after that are stored but not counted until the next trace clears them.
func (m Movie) TracedFrames() int { return m.KeptFrames + m.Progress.FramesWritten }

// ResultsStale reports whether the markers, trim or capture interval changed
// after the last job started: its frames were traced with other settings.
func (m Movie) ResultsStale() bool {
	return m.LastJob != nil && !m.SettingsChangedAt.IsZero() && m.SettingsChangedAt.After(m.LastJob.StartedAt)
}

// SettleCancel records the exact number of frames a cancelled job wrote, and
// of the frames stored beside them.
// CancelTrace records the progress the job last published; its worker may
// have written more frames since, which the cancel keeps. Once the cancel
// committed no frame of the job can land (every write is fenced on its
// lease), so the caller counts the job's stored frames and records them here.
//
// Precondition: the row's last job is JobID, cancelled, and no trace started
// since (status tracing_cancelled). AlreadyApplied: the same count recorded.
type SettleCancel struct {
	JobID  string
	Frames int
	// Kept is how many other frames are stored (the job's plan kept them, or
	// the job was cancelled before it began and cleared nothing).
	Kept int
	Now  time.Time
}

func (c SettleCancel) Validate() error {
	var n error
	if c.Frames < 0 || c.Kept < 0 {
		n = Invalid("frames", "must not be negative")
	}
	return firstError(validateLeaseID("jobId", c.JobID), n)
}

func (c SettleCancel) same() Cond {
	return And{Cmp(FieldFramesWritten, OpEq, c.Frames), Cmp(FieldLastJobFrames, OpEq, c.Frames), Cmp(FieldKeptFrames, OpEq, c.Kept)}
}

func (c SettleCancel) Precondition() []Clause {
	return []Clause{
		{If: And{finished(c.JobID, StatusCancelled), Cmp(FieldStatus, OpEq, StatusCancelled)}, Else: func(Movie) error {
			return &Error{Code: CodeNotTracing, Message: "the cancelled trace is no longer the movie's last"}
		}},
		unchanged(c.same()),
	}
}

// AlreadyApplied: this count is recorded for the job.
func (c SettleCancel) AlreadyApplied() Cond {
	return And{finished(c.JobID, StatusCancelled), Cmp(FieldStatus, OpEq, StatusCancelled), c.same()}
}

func (c SettleCancel) Update() []Assignment {
	return changed(c.Now, Set(FieldFramesWritten, c.Frames), Set(FieldLastJobFrames, c.Frames), Set(FieldKeptFrames, c.Kept))
}

// ReleaseAsk is a viewer's request that the editor release the movie.
type ReleaseAsk struct {
	UserName string
	At       time.Time
}

// AskRelease asks the holder of the live analysis lease to release it; the
// holder's page shows who asked and when. It grants nothing: the holder
// decides. A later ask replaces an earlier one; a new lease has none.
//
// Precondition: a live analysis lease (else not_held: nobody is editing, or a
// trace runs). Asking again is harmless (the time moves), so it needs no
// AlreadyApplied.
type AskRelease struct {
	User User
	Now  time.Time
}

func (c AskRelease) Validate() error { return validateUser(c.User) }

func (c AskRelease) Precondition() []Clause {
	return []Clause{{If: And{Cmp(FieldLeaseKind, OpEq, LeaseAnalysis), LeaseLive(c.Now)}, Else: func(m Movie) error {
		if l := m.LiveLease(c.Now); l != nil {
			return blockedBy(l)
		}
		return &Error{Code: CodeNotHeld, Message: "nobody is editing this movie"}
	}}}
}

func (c AskRelease) Update() []Assignment {
	return changed(c.Now, Set(FieldLeaseReleaseAsk, ReleaseAsk{UserName: c.User.Name, At: c.Now}))
}

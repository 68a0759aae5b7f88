package domain

import "time"

// The commands of an Analyze page: acquire, heartbeat and release the
// analysis lease, and edit the settings under it.

// OpenAnalysis acquires the analysis lease when Analyze opens.
//
// Precondition: the movie is Analysable (its video was ingested), and no
// live lease. A second browser is refused even for the same
// user, because the lease belongs to a page, not a person. A stale lease of
// either kind is replaced; a stale tracing lease through TakeOverStaleTrace
// (takeover.go), so that the row records its abandoned job as failed.
type OpenAnalysis struct {
	LeaseID  string
	User     User
	Now      time.Time
	Duration time.Duration
}

func (c OpenAnalysis) Validate() error {
	return firstError(validateLeaseID("leaseId", c.LeaseID), validateUser(c.User), validateDuration(c.Duration))
}

func (c OpenAnalysis) base() []Clause {
	return []Clause{Analysable(), {If: NoLiveLease(c.Now), Else: func(m Movie) error { return blockedBy(m.Lease) }}}
}

// Precondition: base, and the stale lease replaced is not a tracing lease;
// over one, the opener takes it over (Successor), recording its job as
// failed on the row.
func (c OpenAnalysis) Precondition() []Clause { return append(c.base(), noStaleTrace(c.Now)) }

// Successor: over a stale tracing lease, the takeover that records its job
// as failed and opens this analysis lease in the same write.
func (c OpenAnalysis) Successor(m Movie) (Command, bool) { return staleTraceSuccessor(c, c.Now, m) }

// AlreadyApplied: the live lease is this very analysis lease (its first attempt
// committed and the answer was lost).
func (c OpenAnalysis) AlreadyApplied() Cond {
	return And{LeaseIs(LeaseAnalysis, c.LeaseID, c.Now), Cmp(FieldLeaseUserID, OpEq, c.User.ID)}
}

func (c OpenAnalysis) Update() []Assignment {
	return changed(c.Now, Set(FieldLease, Lease{
		Kind: LeaseAnalysis, ID: c.LeaseID, UserID: c.User.ID, UserName: c.User.Name,
		AcquiredAt: c.Now, HeartbeatAt: c.Now, ExpiresAt: c.Now.Add(c.Duration),
	}))
}

// Heartbeat extends the caller's analysis lease by one duration from now.
//
// Precondition: the live lease is the analysis lease with LeaseID (and, when
// UserID is set, the lease's user is the caller: like an edit, a heartbeat
// is bound to the user; only the release works on the bare capability). A
// stale lease cannot be revived: another browser may already have seen it
// as absent.
type Heartbeat struct {
	LeaseID  string
	UserID   string // when set, must be the lease's user (the HTTP edge sets it)
	Now      time.Time
	Duration time.Duration
}

func (c Heartbeat) Validate() error {
	return firstError(validateLeaseID("leaseId", c.LeaseID), validateDuration(c.Duration))
}

func (c Heartbeat) Precondition() []Clause {
	return []Clause{{If: heldBy(c.LeaseID, c.UserID, c.Now), Else: lostAt(c.Now)}, unchanged(sameRenewal(c.Now, c.Duration))}
}

// AlreadyApplied: the live lease is the caller's and already renewed by this very
// heartbeat (same Now and duration: a retried request).
func (c Heartbeat) AlreadyApplied() Cond {
	return And{heldBy(c.LeaseID, c.UserID, c.Now), sameRenewal(c.Now, c.Duration)}
}

func (c Heartbeat) Update() []Assignment { return changed(c.Now, renewed(c.Now, c.Duration)...) }

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

func (c Release) Precondition() []Clause {
	return []Clause{{If: LeaseIs(LeaseAnalysis, c.LeaseID, c.Now), Else: func(Movie) error {
		return &Error{Code: CodeNotHeld, Message: "nothing to release"}
	}}}
}

func (c Release) Update() []Assignment { return changed(c.Now, Remove(FieldLease)) }

// heldBy is the precondition shared by every settings edit and by a trace
// start with a lease ID: the live lease is the caller's analysis lease, and
// (when userID is set) the lease's user is the caller; the lease ID alone is
// not enough (defence in depth: only the page's release works on the bare
// capability). That also rules out editing while tracing, since a movie has
// one lease at a time.
func heldBy(leaseID, userID string, now time.Time) Cond {
	held := And{LeaseIs(LeaseAnalysis, leaseID, now)}
	if userID != "" {
		held = append(held, Cmp(FieldLeaseUserID, OpEq, userID))
	}
	return held
}

// editGuard refuses an edit whose caller does not hold the lease: blocked by
// the live lease of someone else, or lease_lost when none is live.
func editGuard(leaseID, userID string, now time.Time) Clause {
	return Clause{If: heldBy(leaseID, userID, now), Else: func(m Movie) error {
		if l := m.LiveLease(now); l != nil {
			return blockedBy(l)
		}
		return leaseLost(m, now)
	}}
}

// settingsEdited is what every change of the markers, trim or capture
// interval also records: the clean range is reset (frames traced under other
// settings are no results for these), the results become stale
// (SettingsChangedAt) and the holder was active (the lease's EditedAt).
func settingsEdited(now time.Time) []Assignment {
	return []Assignment{Set(FieldCleanBefore, 0), Set(FieldSettingsChangedAt, now), Set(FieldLeaseEditedAt, now)}
}

// unchanged is the last clause of every edit: the edit changes something. An
// edit that would not (the row already holds these settings) is refused by
// it and recognised by its AlreadyApplied as a no-op success: nothing is written, so
// the version and the clean range stay.
func unchanged(same Cond) Clause {
	return Clause{If: Not{same}, Else: func(Movie) error {
		return &Error{Code: CodeInvalid, Message: "the setting already has this value"}
	}}
}

// EditMarkers replaces the marker list. Precondition: editGuard, and the
// list differs from the stored one. Frames traced for other markers are not
// results for these, so a change resets the clean range (CleanBefore = 0) and
// clears the key frames (Settings.Keys): they corrected the trace this edit
// replaces, and a marker ID of the new list may name a new marker (the page
// reuses IDs), which must never inherit another marker's corrections.
// Invariant: right after a marker edit no key exists. A no-op edit (the same
// list) is a success that writes nothing, so its keys stay.
type EditMarkers struct {
	LeaseID string
	// UserID, when set, must be the lease's user (the HTTP edge sets it).
	UserID  string
	Now     time.Time
	Markers []Marker
}

func (c EditMarkers) Validate() error {
	return firstError(validateLeaseID("leaseId", c.LeaseID), ValidateMarkers(c.Markers))
}

func (c EditMarkers) markers() []Marker {
	if c.Markers == nil {
		return []Marker{}
	}
	return c.Markers
}

func (c EditMarkers) same() Cond { return Cmp(FieldMarkers, OpEq, c.markers()) }

func (c EditMarkers) Precondition() []Clause {
	return []Clause{editGuard(c.LeaseID, c.UserID, c.Now), unchanged(c.same())}
}

// AlreadyApplied: the caller holds the lease and the markers are already these.
func (c EditMarkers) AlreadyApplied() Cond { return And{heldBy(c.LeaseID, c.UserID, c.Now), c.same()} }

func (c EditMarkers) Update() []Assignment {
	return changed(c.Now, append(settingsEdited(c.Now), Set(FieldMarkers, c.markers()), Remove(FieldKeys))...)
}

// EditTrim replaces the trimmed range.
//
// Precondition: editGuard, Trim.End <= FrameCount, and the trim differs from
// the stored one. Trimming moves the capture grid, so no stored frame stays
// clean (CleanBefore = 0); a no-op edit is a success that writes nothing.
type EditTrim struct {
	LeaseID string
	UserID  string // when set, must be the lease's user
	Now     time.Time
	Trim    Trim
}

func (c EditTrim) Validate() error {
	return firstError(validateLeaseID("leaseId", c.LeaseID), ValidateTrim(c.Trim))
}

func (c EditTrim) Precondition() []Clause {
	return []Clause{
		editGuard(c.LeaseID, c.UserID, c.Now),
		{If: Cmp(FieldFrameCount, OpGe, c.Trim.End), Else: func(m Movie) error {
			return Invalid("trim.end", "must not exceed the movie's %d frames", m.FrameCount)
		}},
		unchanged(c.same()),
	}
}

func (c EditTrim) same() Cond {
	return And{Cmp(FieldTrimStart, OpEq, c.Trim.Start), Cmp(FieldTrimEnd, OpEq, c.Trim.End)}
}

// AlreadyApplied: the caller holds the lease and the trim is already this one.
func (c EditTrim) AlreadyApplied() Cond { return And{heldBy(c.LeaseID, c.UserID, c.Now), c.same()} }

func (c EditTrim) Update() []Assignment {
	return changed(c.Now, append(settingsEdited(c.Now), Set(FieldTrimStart, c.Trim.Start), Set(FieldTrimEnd, c.Trim.End))...)
}

// EditCaptureInterval sets how many frames apart tracing samples.
//
// Precondition: editGuard, and the interval differs from the stored one. A
// new interval is a new capture grid, so no stored frame stays clean
// (CleanBefore = 0); a no-op edit is a success that writes nothing.
type EditCaptureInterval struct {
	LeaseID  string
	UserID   string // when set, must be the lease's user
	Now      time.Time
	Interval int
}

func (c EditCaptureInterval) Validate() error {
	return firstError(validateLeaseID("leaseId", c.LeaseID), ValidateCaptureInterval(c.Interval))
}

func (c EditCaptureInterval) same() Cond { return Cmp(FieldCaptureInterval, OpEq, c.Interval) }

func (c EditCaptureInterval) Precondition() []Clause {
	return []Clause{editGuard(c.LeaseID, c.UserID, c.Now), unchanged(c.same())}
}

// AlreadyApplied: the caller holds the lease and the interval is already this one.
func (c EditCaptureInterval) AlreadyApplied() Cond {
	return And{heldBy(c.LeaseID, c.UserID, c.Now), c.same()}
}

func (c EditCaptureInterval) Update() []Assignment {
	return changed(c.Now, append(settingsEdited(c.Now), Set(FieldCaptureInterval, c.Interval))...)
}

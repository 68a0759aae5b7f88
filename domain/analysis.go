package domain

import "time"

// The commands of an Analyze page: acquire, heartbeat and release the
// analysis lease, and edit the settings under it.

// OpenAnalysis acquires the analysis lease when Analyze opens.
//
// Precondition: the movie is Analysable (its video was ingested), and no
// live lease. A second browser is refused even for the same
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

func (c OpenAnalysis) Precondition() []Clause {
	return []Clause{Analysable(), {If: NoLiveLease(c.Now), Else: func(m Movie) error { return blockedBy(m.Lease) }}}
}

func (c OpenAnalysis) Update() []Assignment {
	return changed(c.Now, Set(FieldLease, Lease{
		Kind: LeaseAnalysis, ID: c.LeaseID, UserID: c.User.ID, UserName: c.User.Name,
		AcquiredAt: c.Now, HeartbeatAt: c.Now, ExpiresAt: c.Now.Add(c.Duration),
	}))
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

func (c Heartbeat) Precondition() []Clause {
	return []Clause{{If: LeaseIs(LeaseAnalysis, c.LeaseID, c.Now), Else: lostAt(c.Now)}}
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

// editGuard is the precondition shared by every settings edit: the live lease
// is the caller's analysis lease. That also rules out editing while tracing,
// since a movie has one lease at a time.
func editGuard(leaseID string, now time.Time) Clause {
	return Clause{If: LeaseIs(LeaseAnalysis, leaseID, now), Else: func(m Movie) error {
		if l := m.LiveLease(now); l != nil {
			return blockedBy(l)
		}
		return leaseLost(m, now)
	}}
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

func (c EditMarkers) Precondition() []Clause { return []Clause{editGuard(c.LeaseID, c.Now)} }

func (c EditMarkers) Update() []Assignment {
	ms := c.Markers
	if ms == nil {
		ms = []Marker{}
	}
	return changed(c.Now, Set(FieldMarkers, ms))
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

func (c EditTrim) Precondition() []Clause {
	return []Clause{
		editGuard(c.LeaseID, c.Now),
		{If: Cmp(FieldFrameCount, OpGe, c.Trim.End), Else: func(m Movie) error {
			return Invalid("trim.end", "must not exceed the movie's %d frames", m.FrameCount)
		}},
	}
}

func (c EditTrim) Update() []Assignment {
	return changed(c.Now, Set(FieldTrimStart, c.Trim.Start), Set(FieldTrimEnd, c.Trim.End), Set(FieldCleanBefore, 0))
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

func (c EditCaptureInterval) Precondition() []Clause { return []Clause{editGuard(c.LeaseID, c.Now)} }

func (c EditCaptureInterval) Update() []Assignment {
	return changed(c.Now, Set(FieldCaptureInterval, c.Interval), Set(FieldCleanBefore, 0))
}

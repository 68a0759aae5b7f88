package domain

import (
	"regexp"
	"time"
)

// DefaultLeaseDuration is the renewable lease length of the design: a holder
// that stops heartbeating loses the lease at most this long after its last
// heartbeat.
const DefaultLeaseDuration = 15 * time.Minute

// LeaseKind says what a lease protects.
type LeaseKind string

const (
	// LeaseAnalysis is held by one Analyze browser page; it grants edits.
	LeaseAnalysis LeaseKind = "analysis"
	// LeaseTracing is held by one trace job; its ID is the job ID.
	LeaseTracing LeaseKind = "tracing"
)

// Lease is the movie's one ownership record.
//
// Invariant: a lease is live while Now < ExpiresAt and stale from ExpiresAt on;
// every read and every transition treats a stale lease as absent, and the next
// acquiring write replaces it. Nothing ever deletes a row to expire a lease.
type Lease struct {
	Kind LeaseKind
	// ID is a 128-bit random capability (hex). For a tracing lease it is the job
	// ID. It is returned only to the caller that acquired it.
	ID          string
	UserID      string
	UserName    string
	AcquiredAt  time.Time
	HeartbeatAt time.Time
	ExpiresAt   time.Time
	// Claimed is set once a worker claimed the tracing job; a job is claimed at
	// most once, so SQS redelivery is a no-op.
	Claimed bool
	// ClaimToken is the random token of the claim attempt that claimed the
	// job (one per delivery of the job's message, "" if the claimer sent
	// none). A retried request of that attempt recognises its own claim by it;
	// a redelivered message brings a new token and stays a no-op.
	ClaimToken string
	// FromFrame is the frame a tracing job was asked to start at.
	FromFrame int
	// EditedAt is the analysis lease holder's last accepted edit (zero: none
	// yet). It, not the heartbeat, is the holder's last activity.
	EditedAt time.Time
	// ReleaseAsk is a viewer's request that the holder release the lease
	// (nil: none). It names the asker, never a lease ID.
	ReleaseAsk *ReleaseAsk
	// Segment is the tracing job's segment that is (or is next to be)
	// claimed: 0 for the first invocation, one more for each continuation
	// the job was handed off to (HandOffJob). Each segment is claimed at
	// most once (ClaimSegment).
	Segment int
	// PlanFrom is the first frame of the tracing job's plan (TracePlan.From),
	// recorded when the plan is made (BeginTrace) and kept across segments:
	// the job traces PlanFrom, PlanFrom+interval, ... below the trim's end.
	// A hand-off moves CleanBefore, so the plan cannot be recomputed from a
	// later row (PlanTrace); readers of the job's range use this fact.
	// It is 0 until BeginTrace.
	PlanFrom int
}

// LiveAt reports whether the lease is live at now (now < ExpiresAt): the
// rule LeaseLive, evaluated on this lease.
func (l *Lease) LiveAt(now time.Time) bool {
	return Holds(LeaseLive(now), &Movie{Lease: l})
}

func (l *Lease) holder() Holder {
	return Holder{Kind: l.Kind, UserID: l.UserID, UserName: l.UserName, StartedAt: l.AcquiredAt}
}

// User identifies who initiated a lease.
type User struct {
	ID   string
	Name string
}

var leaseIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// ValidLeaseID reports whether id has the shape of a lease or job ID: 32
// lowercase hex digits, i.e. 128 random bits.
func ValidLeaseID(id string) bool { return leaseIDPattern.MatchString(id) }

func validateLeaseID(field, id string) error {
	if id == "" {
		return &Error{Code: CodeLeaseRequired, Field: field, Message: "a lease ID is required"}
	}
	if !ValidLeaseID(id) {
		return Invalid(field, "must be 32 lowercase hex digits")
	}
	return nil
}

const maxUserField = 128

func validateUser(u User) error {
	if u.ID == "" || len(u.ID) > maxUserField {
		return Invalid("user.id", "must be 1-%d bytes", maxUserField)
	}
	if u.Name == "" || len(u.Name) > maxUserField {
		return Invalid("user.name", "must be 1-%d bytes", maxUserField)
	}
	return nil
}

func validateDuration(d time.Duration) error {
	if d <= 0 {
		return Invalid("duration", "lease duration must be positive")
	}
	return nil
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

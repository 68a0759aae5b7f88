package domain

import "time"

// A rule is a value. Every command states its precondition as a Cond and its
// update as a list of Assignments over the named fields of a movie. The domain
// evaluates those values itself (Decide, Apply, Execute), and a storage adapter
// translates the same values node by node into its own condition and update
// language; there is no second, hand-written copy of any rule.
//
// The vocabulary is deliberately small and closed, so that every adapter can
// translate all of it: And, Or, Not, Present, Absent, and comparisons (Compare)
// between fields, the size of a list field and constant values. Comparison
// semantics follow DynamoDB's: a comparison with an absent field, or between
// values of different kinds, is false. Times compare at millisecond
// resolution, the stored precision (Unix milliseconds), so a rule decides the
// same on a stored row whatever fraction of a millisecond a command's Now
// carries, and equality of times is meaningful.

// Field names a part of a movie that rules read or write. The names are the
// domain's (Go paths of Movie); an adapter maps each to its storage attribute
// in one table.
type Field string

// The fields rules may name. Lease fields are absent when the movie has no
// lease, LastJob fields when it has no recorded job.
const (
	FieldID              Field = "ID"
	FieldFrameCount      Field = "FrameCount"
	FieldStatus          Field = "Status"
	FieldMarkers         Field = "Settings.Markers"
	FieldTrimStart       Field = "Settings.Trim.Start"
	FieldTrimEnd         Field = "Settings.Trim.End"
	FieldCaptureInterval Field = "Settings.CaptureInterval"
	FieldFramesWritten   Field = "Progress.FramesWritten"
	FieldTotalFrames     Field = "Progress.TotalFrames"
	FieldCleanBefore     Field = "CleanBefore"
	FieldLastJob         Field = "LastJob"
	FieldVersion         Field = "Version"
	FieldUpdatedAt       Field = "UpdatedAt"
	// The upload lifecycle (upload.go); Video, IngestFailure and
	// Upload.ExpiresAt are absent until set.
	FieldFrameRate       Field = "FrameRate"
	FieldVideo           Field = "Video"
	FieldIngestFailure   Field = "IngestFailure"
	FieldUploadExpiresAt Field = "Upload.ExpiresAt"

	FieldLease            Field = "Lease"
	FieldLeaseKind        Field = "Lease.Kind"
	FieldLeaseID          Field = "Lease.ID"
	FieldLeaseUserID      Field = "Lease.UserID"
	FieldLeaseHeartbeatAt Field = "Lease.HeartbeatAt"
	FieldLeaseExpiresAt   Field = "Lease.ExpiresAt"
	FieldLeaseClaimed     Field = "Lease.Claimed"
	FieldLeaseClaimToken  Field = "Lease.ClaimToken"
	FieldLastJobID        Field = "LastJob.JobID"
	FieldLastJobStatus    Field = "LastJob.Status"
	// FieldLastJobSummary is absent when the last job has no failure summary.
	FieldLastJobSummary Field = "LastJob.FailureSummary"
	FieldLeaseSegment   Field = "Lease.Segment"
	// FieldLeasePlanFrom is the first frame of the tracing job's plan, recorded
	// by BeginTrace (always present on a lease; 0 before the plan is made).
	FieldLeasePlanFrom Field = "Lease.PlanFrom"

	// FieldKeptFrames is how many frames of earlier completed traces a job
	// kept below its plan (BeginTrace, from TracePlan.Kept): with the job's
	// FieldFramesWritten, the movie's stored frames (Movie.TracedFrames).
	FieldKeptFrames Field = "KeptFrames"
	// FieldSettingsChangedAt is when the markers, trim or capture interval
	// last changed (absent: never); results older than it are stale.
	FieldSettingsChangedAt Field = "SettingsChangedAt"
	// FieldLastJobFrames is the frames the last job wrote (SettleCancel).
	FieldLastJobFrames Field = "LastJob.Frames"
	// FieldLeaseEditedAt is the analysis lease holder's last edit (absent:
	// none yet): what "last active" means, not the heartbeat.
	FieldLeaseEditedAt Field = "Lease.EditedAt"
	// FieldLeaseReleaseAsk is a viewer's request that the holder release the
	// analysis lease (AskRelease; absent: none).
	FieldLeaseReleaseAsk Field = "Lease.ReleaseAsk"
	FieldTitle           Field = "Title"
)

// Fields lists every field a rule may name, so an adapter can check at start
// (and in its tests) that its table maps each of them.
var Fields = []Field{
	FieldID, FieldFrameCount, FieldStatus, FieldMarkers, FieldTrimStart, FieldTrimEnd, FieldCaptureInterval,
	FieldFramesWritten, FieldTotalFrames, FieldCleanBefore, FieldLastJob, FieldVersion, FieldUpdatedAt,
	FieldLease, FieldLeaseKind, FieldLeaseID, FieldLeaseUserID, FieldLeaseHeartbeatAt, FieldLeaseExpiresAt,
	FieldLeaseClaimed, FieldLeaseSegment, FieldFrameRate, FieldVideo, FieldIngestFailure, FieldUploadExpiresAt,
	FieldLeaseClaimToken, FieldLastJobID, FieldLastJobStatus, FieldLastJobSummary, FieldCalibration,
	FieldLeasePlanFrom, FieldTitle, FieldKeys, FieldKeptFrames, FieldSettingsChangedAt, FieldLastJobFrames, FieldLeaseEditedAt,
	FieldLeaseReleaseAsk,
}

// Operand is one side of a comparison: a Field, a SizeOf a list field, or a
// Value.
type Operand interface{ operand() }

// SizeOf is the number of elements of a list field.
type SizeOf struct{ Field Field }

// Value is a constant: an int, int64, string, bool, time.Time, Status,
// LeaseKind, a []Marker, a []Key or a Calibration (these three compared for
// equality only).
type Value struct{ V any }

func (Field) operand()  {}
func (SizeOf) operand() {}
func (Value) operand()  {}

// Op is a comparison operator.
type Op string

const (
	OpEq Op = "="
	OpLt Op = "<"
	OpLe Op = "<="
	OpGt Op = ">"
	OpGe Op = ">="
)

// Cond is a closed boolean expression over a movie's fields. Its only
// implementations are And, Or, Not, Present, Absent and Compare.
type Cond interface{ cond() }

// And holds when every one of its conditions holds (an empty And holds).
type And []Cond

// Or holds when at least one of its conditions holds (an empty Or does not).
type Or []Cond

// Not holds when its condition does not.
type Not struct{ C Cond }

// Present holds when the field exists on the stored movie.
type Present struct{ Field Field }

// Absent holds when the field does not exist on the stored movie.
type Absent struct{ Field Field }

// Compare holds when L Op R; it is false when either side is absent or the
// two sides are of different kinds.
type Compare struct {
	L  Operand
	Op Op
	R  Operand
}

func (And) cond()     {}
func (Or) cond()      {}
func (Not) cond()     {}
func (Present) cond() {}
func (Absent) cond()  {}
func (Compare) cond() {}

// Cmp builds the comparison "field op value".
func Cmp(f Field, op Op, v any) Compare { return Compare{L: f, Op: op, R: Value{v}} }

// Exists holds for every stored movie.
func Exists() Cond { return Present{FieldID} }

// LeaseLive holds while the stored lease is live at now: now < ExpiresAt.
// (A stale lease, now >= ExpiresAt, is absent to every rule.)
func LeaseLive(now time.Time) Cond { return Cmp(FieldLeaseExpiresAt, OpGt, now) }

// LeaseStale holds when the stored movie has a lease and it is stale at now
// (now >= ExpiresAt, the negation of LeaseLive on a stored lease).
func LeaseStale(now time.Time) Cond { return Cmp(FieldLeaseExpiresAt, OpLe, now) }

// TraceStale holds when the stored lease is a tracing lease stale at now:
// its job ended without a terminal write (its worker died, or it waited in
// the queue longer than its lease). It is the one statement of "a stale
// tracing lease": the sweeper's FinalizeStaleTrace and an acquirer's
// TakeOverStaleTrace find one with it (StaleTraceAt) and commit under it.
func TraceStale(now time.Time) Cond {
	return And{Cmp(FieldLeaseKind, OpEq, LeaseTracing), LeaseStale(now)}
}

// NoLiveLease holds when there is no lease or it is stale at now.
func NoLiveLease(now time.Time) Cond { return Or{Absent{FieldLease}, LeaseStale(now)} }

// LeaseIs holds when the stored lease is live at now, of kind k, with id.
func LeaseIs(k LeaseKind, id string, now time.Time) Cond {
	return And{Cmp(FieldLeaseKind, OpEq, k), Cmp(FieldLeaseID, OpEq, id), LeaseLive(now)}
}

// Claimed holds when the stored lease's claimed flag is b.
func Claimed(b bool) Cond { return Cmp(FieldLeaseClaimed, OpEq, b) }

// TrimContains holds when frame f lies in the stored trim [Start, End).
func TrimContains(f int) Cond {
	return And{Cmp(FieldTrimStart, OpLe, f), Cmp(FieldTrimEnd, OpGt, f)}
}

// HasMarkers holds when at least one marker is placed.
func HasMarkers() Cond { return Compare{L: SizeOf{FieldMarkers}, Op: OpGt, R: Value{0}} }

// AssignOp is what an Assignment does to its field.
type AssignOp string

const (
	// AssignSet stores Value in the field.
	AssignSet AssignOp = "set"
	// AssignRemove deletes the field (only FieldLease, FieldCalibration and FieldKeys).
	AssignRemove AssignOp = "remove"
	// AssignAdd adds the integer Value to a numeric field.
	AssignAdd AssignOp = "add"
	// AssignCopy stores in the field the value another field (Value, a
	// Field) has on the stored row before the update: the rule derives the
	// new value from the row instead of trusting the caller. The source is
	// present whenever the command's precondition holds, is of the
	// destination's type, and no assignment of the same update changes it.
	AssignCopy AssignOp = "copy"
)

// Assignment is one field change of an update. An update never names a field
// twice, nor a field and a part of it (Lease and Lease.ExpiresAt), so the
// order of its assignments does not matter.
type Assignment struct {
	Op    AssignOp
	Field Field
	// Value is the new value for AssignSet (a field's own type: int, bool,
	// string, time.Time, Status, []Marker, []Key, Lease, JobRecord, Calibration) and the int
	// increment for AssignAdd, the source Field for AssignCopy.
	Value any
}

// Set assigns v to f.
func Set(f Field, v any) Assignment { return Assignment{Op: AssignSet, Field: f, Value: v} }

// Remove deletes f.
func Remove(f Field) Assignment { return Assignment{Op: AssignRemove, Field: f} }

// Copy assigns to f the value the stored row has in src (AssignCopy).
func Copy(f, src Field) Assignment { return Assignment{Op: AssignCopy, Field: f, Value: src} }

// Add increments the numeric field f by n.
func Add(f Field, n int) Assignment { return Assignment{Op: AssignAdd, Field: f, Value: n} }

// Clause is one part of a precondition: the condition If that must hold, and
// the refusal Else explains when it does not. Else only explains; it is
// called with the stored movie only after If was found false on it, and never
// decides whether a write is legal.
type Clause struct {
	If   Cond
	Else func(m Movie) error
}

package domain

import (
	"fmt"
	"slices"
	"time"
)

// Holds evaluates c on a stored movie (nil: the movie does not exist, so
// every field is absent).
func Holds(c Cond, m *Movie) bool {
	switch c := c.(type) {
	case And:
		for _, x := range c {
			if !Holds(x, m) {
				return false
			}
		}
		return true
	case Or:
		for _, x := range c {
			if Holds(x, m) {
				return true
			}
		}
		return false
	case Not:
		return !Holds(c.C, m)
	case Present:
		_, ok := m.field(c.Field)
		return ok
	case Absent:
		_, ok := m.field(c.Field)
		return !ok
	case Compare:
		l, lok := m.operand(c.L)
		r, rok := m.operand(c.R)
		return lok && rok && compare(l, c.Op, r)
	}
	panic(fmt.Sprintf("domain: unknown condition %T", c))
}

// OmittedWhenZero reports whether field f is absent when it holds its zero
// value (the empty string, segment 0): the claim token, the last job's
// failure summary, the ingest failure and the lease's segment. It is the one
// definition of "a field exists" for those fields: the domain's evaluator
// applies it (field), and the item schema omits exactly them when zero
// (omitempty), which dynamo's TestPresenceIsTheDomains checks field by field.
func OmittedWhenZero(f Field) bool {
	switch f {
	case FieldLeaseClaimToken, FieldLastJobSummary, FieldIngestFailure, FieldLeaseSegment:
		return true
	}
	return false
}

// field reads a field of a stored movie; ok is false when it is absent
// (OmittedWhenZero included).
func (m *Movie) field(f Field) (v any, ok bool) {
	v, ok = m.value(f)
	if ok && OmittedWhenZero(f) && (v == "" || v == 0) {
		return nil, false
	}
	return v, ok
}

// value reads a field of a stored movie whatever its value; ok is false when
// the record holding it (the lease, the last job, the video, the upload) is
// absent.
func (m *Movie) value(f Field) (v any, ok bool) {
	if m == nil {
		return nil, false
	}
	l, j := m.Lease, m.LastJob
	switch f {
	case FieldID:
		return m.ID, true
	case FieldFrameCount:
		return m.FrameCount, true
	case FieldStatus:
		return m.Status, true
	case FieldMarkers:
		return m.Settings.Markers, true
	case FieldKeys:
		if len(m.Settings.Keys) == 0 {
			return nil, false
		}
		return m.Settings.Keys, true
	case FieldTrimStart:
		return m.Settings.Trim.Start, true
	case FieldTrimEnd:
		return m.Settings.Trim.End, true
	case FieldCaptureInterval:
		return m.Settings.CaptureInterval, true
	case FieldFramesWritten:
		return m.Progress.FramesWritten, true
	case FieldTotalFrames:
		return m.Progress.TotalFrames, true
	case FieldCleanBefore:
		return m.CleanBefore, true
	case FieldLastJob, FieldLastJobID, FieldLastJobStatus, FieldLastJobSummary, FieldLastJobFrames:
		switch {
		case j == nil:
			return nil, false
		case f == FieldLastJobID:
			return j.JobID, true
		case f == FieldLastJobStatus:
			return j.Status, true
		case f == FieldLastJobSummary:
			return j.FailureSummary, true
		case f == FieldLastJobFrames:
			return j.Frames, true
		}
		return *j, true
	case FieldVersion:
		return m.Version, true
	case FieldUpdatedAt:
		return m.UpdatedAt, true
	case FieldKeptFrames:
		return m.KeptFrames, true
	case FieldSettingsChangedAt:
		if m.SettingsChangedAt.IsZero() {
			return nil, false
		}
		return m.SettingsChangedAt, true
	case FieldFrameRate:
		return m.FrameRate, true
	case FieldVideo:
		if m.Video == nil {
			return nil, false
		}
		return *m.Video, true
	case FieldIngestFailure:
		return m.IngestFailure, true
	case FieldCalibration:
		if m.Calibration == nil {
			return nil, false
		}
		return *m.Calibration, true
	case FieldTitle:
		return m.Title, true
	case FieldUploadExpiresAt:
		if m.Upload == nil {
			return nil, false
		}
		return m.Upload.ExpiresAt, true
	}
	if l == nil {
		return nil, false
	}
	switch f {
	case FieldLease:
		return *l, true
	case FieldLeaseKind:
		return l.Kind, true
	case FieldLeaseID:
		return l.ID, true
	case FieldLeaseUserID:
		return l.UserID, true
	case FieldLeaseHeartbeatAt:
		return l.HeartbeatAt, true
	case FieldLeaseExpiresAt:
		return l.ExpiresAt, true
	case FieldLeaseClaimed:
		return l.Claimed, true
	case FieldLeaseClaimToken:
		return l.ClaimToken, true
	case FieldLeaseSegment:
		return l.Segment, true
	case FieldLeasePlanFrom:
		return l.PlanFrom, true
	case FieldLeaseEditedAt:
		if l.EditedAt.IsZero() {
			return nil, false
		}
		return l.EditedAt, true
	case FieldLeaseReleaseAsk:
		if l.ReleaseAsk == nil {
			return nil, false
		}
		return *l.ReleaseAsk, true
	}
	panic(fmt.Sprintf("domain: unknown field %q", f))
}

func (m *Movie) operand(o Operand) (any, bool) {
	switch o := o.(type) {
	case Field:
		return m.field(o)
	case SizeOf:
		v, ok := m.field(o.Field)
		if ms, isList := v.([]Marker); ok && isList {
			return len(ms), true
		}
		return nil, false
	case Value:
		return o.V, true
	}
	panic(fmt.Sprintf("domain: unknown operand %T", o))
}

// scalar normalises a comparable value to int64, string, bool or time.Time.
func scalar(v any) any {
	switch v := v.(type) {
	case int:
		return int64(v)
	case Status:
		return string(v)
	case LeaseKind:
		return string(v)
	}
	return v
}

// compare applies op to two values; values of different kinds never compare
// (false), and bools and marker lists only compare equal.
func compare(l any, op Op, r any) bool {
	var c int
	switch l := scalar(l).(type) {
	case []Marker:
		r, ok := r.([]Marker)
		return ok && op == OpEq && slices.Equal(l, r)
	case Calibration:
		r, ok := r.(Calibration)
		return ok && op == OpEq && l == r
	case []Key:
		r, ok := r.([]Key)
		return ok && op == OpEq && slices.Equal(l, r)
	case int64:
		r, ok := scalar(r).(int64)
		if !ok {
			return false
		}
		c = cmpOrdered(l, r)
	case string:
		r, ok := scalar(r).(string)
		if !ok {
			return false
		}
		c = cmpOrdered(l, r)
	case time.Time:
		r, ok := r.(time.Time)
		if !ok {
			return false
		}
		c = cmpOrdered(l.UnixMilli(), r.UnixMilli())
	case bool:
		r, ok := r.(bool)
		return ok && op == OpEq && l == r
	default:
		return false
	}
	switch op {
	case OpEq:
		return c == 0
	case OpLt:
		return c < 0
	case OpLe:
		return c <= 0
	case OpGt:
		return c > 0
	case OpGe:
		return c >= 0
	}
	panic(fmt.Sprintf("domain: unknown operator %q", op))
}

func cmpOrdered[T int64 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// copied reads the source of a copy assignment; an absent source is a bug
// (the command's precondition must guarantee it) and panics.
func (m *Movie) copied(a Assignment) any {
	v, ok := m.field(a.Value.(Field))
	if !ok {
		panic(fmt.Sprintf("domain: copy into %q from absent %q", a.Field, a.Value))
	}
	return v
}

// assign applies one assignment to m. The domain's commands assign only
// values of a field's own type, and lease parts only while a lease exists
// (their preconditions require it); anything else is a bug and panics.
func (m *Movie) assign(a Assignment) {
	switch a.Op {
	case AssignRemove:
		switch a.Field {
		case FieldLease:
			m.Lease = nil
		case FieldCalibration:
			m.Calibration = nil
		case FieldKeys:
			m.Settings.Keys = nil
		default:
			panic(fmt.Sprintf("domain: cannot remove %q", a.Field))
		}
		return
	case AssignAdd:
		if a.Field != FieldVersion {
			panic(fmt.Sprintf("domain: cannot add to %q", a.Field))
		}
		m.Version += int64(a.Value.(int))
		return
	}
	switch a.Field {
	case FieldStatus:
		m.Status = a.Value.(Status)
	case FieldFrameCount:
		m.FrameCount = a.Value.(int)
	case FieldFrameRate:
		m.FrameRate = a.Value.(float64)
	case FieldVideo:
		v := a.Value.(Video)
		m.Video = &v
	case FieldIngestFailure:
		m.IngestFailure = a.Value.(string)
	case FieldCalibration:
		c := a.Value.(Calibration)
		m.Calibration = &c
	case FieldTitle:
		m.Title = a.Value.(string)
	case FieldMarkers:
		m.Settings.Markers = slices.Clone(a.Value.([]Marker))
		if m.Settings.Markers == nil {
			m.Settings.Markers = []Marker{}
		}
	case FieldKeys:
		m.Settings.Keys = slices.Clone(a.Value.([]Key))
	case FieldTrimStart:
		m.Settings.Trim.Start = a.Value.(int)
	case FieldTrimEnd:
		m.Settings.Trim.End = a.Value.(int)
	case FieldCaptureInterval:
		m.Settings.CaptureInterval = a.Value.(int)
	case FieldFramesWritten:
		m.Progress.FramesWritten = a.Value.(int)
	case FieldTotalFrames:
		m.Progress.TotalFrames = a.Value.(int)
	case FieldCleanBefore:
		m.CleanBefore = a.Value.(int)
	case FieldLastJob:
		j := a.Value.(JobRecord)
		m.LastJob = &j
	case FieldUpdatedAt:
		m.UpdatedAt = a.Value.(time.Time)
	case FieldKeptFrames:
		m.KeptFrames = a.Value.(int)
	case FieldSettingsChangedAt:
		m.SettingsChangedAt = a.Value.(time.Time)
	case FieldLastJobFrames:
		j := *m.LastJob // a copy, as for the lease
		j.Frames = a.Value.(int)
		m.LastJob = &j
	case FieldLease:
		l := a.Value.(Lease)
		m.Lease = &l
	case FieldLeaseHeartbeatAt, FieldLeaseExpiresAt, FieldLeaseClaimed, FieldLeaseClaimToken, FieldLeaseSegment, FieldLeasePlanFrom,
		FieldLeaseEditedAt, FieldLeaseReleaseAsk:
		l := *m.Lease // a copy: the caller's movie may share the pointer
		switch a.Field {
		case FieldLeaseHeartbeatAt:
			l.HeartbeatAt = a.Value.(time.Time)
		case FieldLeaseExpiresAt:
			l.ExpiresAt = a.Value.(time.Time)
		case FieldLeaseClaimToken:
			l.ClaimToken = a.Value.(string)
		case FieldLeaseSegment:
			l.Segment = a.Value.(int)
		case FieldLeasePlanFrom:
			l.PlanFrom = a.Value.(int)
		case FieldLeaseEditedAt:
			l.EditedAt = a.Value.(time.Time)
		case FieldLeaseReleaseAsk:
			r := a.Value.(ReleaseAsk)
			l.ReleaseAsk = &r
		default:
			l.Claimed = a.Value.(bool)
		}
		m.Lease = &l
	default:
		panic(fmt.Sprintf("domain: cannot set %q", a.Field))
	}
}

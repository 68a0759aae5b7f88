package events

import (
	"strconv"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// EventType names a domain event. The set is closed.
type EventType string

const (
	// TracingStarted: a commit gave the movie a new tracing lease (StartTrace).
	// It is what enqueues the job.
	TracingStarted EventType = "movie.tracing.started"
	// TracingCompleted: the job's terminal write published status traced.
	TracingCompleted EventType = "movie.tracing.completed"
	// TracingFailed: the job's terminal write published status tracing_failed
	// with a sanitized summary.
	TracingFailed EventType = "movie.tracing.failed"
	// TracingAbandoned: the job's tracing lease went stale without a terminal
	// write and a later commit replaced it (a stale takeover). No worker can
	// finish that job any more, so this is its outcome.
	TracingAbandoned EventType = "movie.tracing.abandoned"
	// TracingCancelled: the user who started the job cancelled it
	// (domain.CancelTrace); the job's frames written so far are kept.
	TracingCancelled EventType = "movie.tracing.cancelled"
	// CalibrationSet: the lease holder set or changed the movie's
	// calibration (domain.EditCalibration); CalibrationCleared: removed it.
	// Calibration describes the new one; UserID/UserName are the analysis
	// lease's holder who made the change; no job.
	CalibrationSet     EventType = "movie.calibration.set"
	CalibrationCleared EventType = "movie.calibration.cleared"
)

// Event is a domain event derived from one committed change of a movie row.
//
// Every field comes from the row's images, never from the processing clock,
// so the same stream record always derives the same events. Job IDs are
// public (users see them); analysis lease IDs never appear in an event.
type Event struct {
	Type     EventType `json:"type"`
	MovieID  string    `json:"movieId"`
	JobID    string    `json:"jobId"`
	UserID   string    `json:"userId"`
	UserName string    `json:"userName"`
	// At is when it happened: the lease's AcquiredAt (started), the job's
	// FinishedAt (completed, failed) or the stale lease's ExpiresAt
	// (abandoned: the moment it stopped being live).
	At        time.Time `json:"at"`
	FromFrame int       `json:"fromFrame"`
	// Version is the movie row's version after the change.
	Version int64 `json:"version"`
	// Summary is the sanitized failure summary (failed, abandoned).
	Summary string `json:"summary,omitempty"`
	// The settings the trace ran with (the row's settings: they cannot
	// change while a trace runs), for the movie's history.
	TrimStart       int `json:"trimStart"`
	TrimEnd         int `json:"trimEnd"`
	CaptureInterval int `json:"captureInterval"`
	// Frames is how many frames the job wrote (completed, failed, abandoned);
	// FirstFrame and LastFrame the frames it traced first and last, when
	// Frames > 0 and the old image holds the job's claim.
	Frames     int `json:"frames,omitempty"`
	FirstFrame int `json:"firstFrame,omitempty"`
	LastFrame  int `json:"lastFrame,omitempty"`
	// Calibration describes the calibration set (CalibrationSet).
	Calibration string `json:"calibration,omitempty"`
}

// withTrace adds the settings of m and, for a job that wrote frames, the
// range it traced: the job's plan as recorded when it was made (the
// lease's PlanFrom, set by domain.BeginTrace, and the settings' interval) at
// frames 0 and frames-1. It is never recomputed from old: a hand-off moved
// old's CleanBefore, so domain.PlanTrace of a later row names other frames.
func (e Event) withTrace(m *domain.Movie, old *domain.Movie, frames int) Event {
	e.TrimStart, e.TrimEnd, e.CaptureInterval = m.Settings.Trim.Start, m.Settings.Trim.End, m.Settings.CaptureInterval
	e.Frames = frames
	if frames > 0 && old != nil && old.Lease != nil && old.Lease.Kind == domain.LeaseTracing && old.Lease.ID == e.JobID {
		p := domain.TracePlan{From: old.Lease.PlanFrom, Interval: max(old.Settings.CaptureInterval, 1)}
		e.FirstFrame, e.LastFrame = p.FrameAt(0), p.FrameAt(frames-1)
	}
	return e
}

// Derive returns the events implied by one change of a movie row, in the
// order they happened (an abandoned job before the job that replaced it).
// old is nil for a new row; new is nil for a deleted row (no events: the
// domain never deletes a movie). It is pure.
//
// It needs nothing but the two images of the change, so a stream filter may
// drop any record whose images cannot produce an event: a change derives
// events only if new.Status is tracing (started), new.Status is traced or
// tracing_failed (completed, failed), or old has a tracing lease, which
// implies old.Status is tracing (abandoned).
func Derive(old, new *domain.Movie) []Event {
	if new == nil {
		return nil
	}
	var out []Event
	var oldJob *domain.Lease
	if old != nil && old.Lease != nil && old.Lease.Kind == domain.LeaseTracing {
		oldJob = old.Lease
	}
	newJob := new.Lease
	if newJob != nil && newJob.Kind != domain.LeaseTracing {
		newJob = nil
	}

	// completed / failed: a job record that was not there before.
	var finished *domain.JobRecord
	if j := new.LastJob; j != nil && (old == nil || old.LastJob == nil || old.LastJob.JobID != j.JobID) &&
		(new.Status == domain.StatusTraced || new.Status == domain.StatusFailed || new.Status == domain.StatusCancelled) && j.Status == new.Status {
		finished = j
	}

	// abandoned: old's job lease is gone and that job did not finish here.
	// A takeover (an acquirer replaced the stale lease with its own) records
	// the job on the row as failed in the same write (domain.TakeOverStaleTrace):
	// that is still the job's abandonment, with the summary the row recorded,
	// and no second event.
	if oldJob != nil && (newJob == nil || newJob.ID != oldJob.ID) {
		var rec *domain.JobRecord
		if j := new.LastJob; j != nil && j.JobID == oldJob.ID && j.Status == domain.StatusFailed {
			rec = j
		}
		tookOver := new.Lease != nil
		if finished == nil || finished.JobID != oldJob.ID || tookOver {
			summary, frames := domain.StalledSummary, old.Progress.FramesWritten
			if rec != nil && tookOver {
				summary, frames = rec.FailureSummary, rec.Frames
			}
			out = append(out, Event{
				Type: TracingAbandoned, MovieID: new.ID, JobID: oldJob.ID,
				UserID: oldJob.UserID, UserName: oldJob.UserName,
				At: oldJob.ExpiresAt.UTC(), FromFrame: oldJob.FromFrame, Version: new.Version,
				Summary: domain.SanitizeSummary(summary),
			}.withTrace(old, old, frames))
			if finished != nil && finished.JobID == oldJob.ID {
				finished = nil
			}
		}
	}

	if finished != nil {
		e := Event{
			Type: TracingCompleted, MovieID: new.ID, JobID: finished.JobID,
			UserID: finished.UserID, UserName: finished.UserName,
			At: finished.FinishedAt.UTC(), FromFrame: finished.FromFrame, Version: new.Version,
		}
		switch finished.Status {
		case domain.StatusFailed:
			e.Type = TracingFailed
			e.Summary = domain.SanitizeSummary(finished.FailureSummary)
		case domain.StatusCancelled:
			e.Type = TracingCancelled
		}
		out = append(out, e.withTrace(new, old, finished.Frames))
	}

	out = append(out, calibrationEvents(old, new)...)

	// started: a tracing lease that was not there before.
	if newJob != nil && new.Status == domain.StatusTracing && (oldJob == nil || oldJob.ID != newJob.ID) {
		e := Event{
			Type: TracingStarted, MovieID: new.ID, JobID: newJob.ID,
			UserID: newJob.UserID, UserName: newJob.UserName,
			At: newJob.AcquiredAt.UTC(), FromFrame: newJob.FromFrame, Version: new.Version,
		}.withTrace(new, nil, 0)
		// The frames it will trace: its plan on the row it starts from. Nothing
		// can change the settings or CleanBefore between this commit and the
		// job's claim (the tracing lease excludes edits), so this is the plan
		// BeginTrace records. A job asked from frame 100 on a movie clean only
		// below 24 traces 24 on, and the history says so (issue 25).
		if p := domain.PlanTrace(*new, *newJob); p.Frames > 0 {
			e.FirstFrame, e.LastFrame = p.From, p.FrameAt(p.Frames-1)
		}
		out = append(out, e)
	}
	return out
}

// AuditKey is the audit sort key of an event: "<jobId>#<eventType>", or for
// an event of no job (a calibration) "v<version>#<eventType>": the row's
// version after the change, which no other change of the row shares.
func (e Event) AuditKey() string {
	if e.JobID == "" {
		return "v" + strconv.FormatInt(e.Version, 10) + "#" + string(e.Type)
	}
	return e.JobID + "#" + string(e.Type)
}

// Job returns the SQS trace-job body of a started event.
func (e Event) Job() TraceJob {
	return TraceJob{MovieID: e.MovieID, JobID: e.JobID, FromFrame: e.FromFrame, Version: e.Version}
}

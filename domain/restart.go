package domain

import "time"

// Restart is what "Start it again" does with the frames a trace that did
// not finish (failed, stalled or cancelled) left behind, derived from the
// same facts PlanTrace reads, so that what the API shows, what the page says
// and what the worker does cannot disagree (issue 20, item 4).
//
// Invariant (TestRestartAgreesWithThePlan): when Resumes, a trace started at
// any frame from ResumeFrom to the trim's end plans to start at ResumeFrom
// and clears nothing below CleanBefore (TracePlan.From == ResumeFrom,
// TracePlan.ClearFrom == CleanBefore <= ResumeFrom): every stored frame
// before ResumeFrom, all of them the work of traces with the current
// settings and markers, is kept and the trace resumes after the last of
// them; a trace started before ResumeFrom traces again, and so replaces,
// the frames from its start. When Replaces, no trace keeps what the last
// trace saved: it was never checkpointed, or a settings or markers edit
// since then reset CleanBefore (TrimEdit, MarkersEdit and CaptureIntervalEdit
// set it to 0), so a retrace traces those frames again.
type Restart struct {
	// Resumes: a retrace started at ResumeFrom keeps the frames before it.
	Resumes bool
	// ResumeFrom is the first frame a resuming retrace traces (the last
	// checkpoint, on the capture grid); 0 unless Resumes.
	ResumeFrom int
	// Replaces: the last trace saved frames that any retrace replaces.
	Replaces bool
}

// RestartOf derives the Restart of m as readers see it at now (View: a
// stalled trace counts as failed). Only a movie whose last trace did not
// finish has one to offer; any other is the zero Restart (a retrace after a
// complete trace traces from the chosen frame, as asked).
func RestartOf(m Movie, now time.Time) Restart {
	v := m.View(now)
	if v.Status != StatusFailed && v.Status != StatusCancelled {
		return Restart{}
	}
	s := m.Settings
	if m.CleanBefore > s.Trim.Start {
		p := PlanTrace(m, Lease{Kind: LeaseTracing, FromFrame: m.CleanBefore})
		if p.Frames > 0 {
			return Restart{Resumes: true, ResumeFrom: p.From}
		}
	}
	return Restart{Replaces: v.LastJob != nil && v.LastJob.Frames > 0}
}

package domain

// TracePlan is what a claimed job will do: clear every stored frame at or
// after ClearFrom, then trace the frames From, From+Interval, ... below End.
type TracePlan struct {
	ClearFrom int // becomes the movie's CleanBefore while the job runs
	From      int // first frame traced
	End       int // exclusive
	Interval  int
	Frames    int // number of frames the plan writes
	// Kept is how many frames of earlier completed traces stay stored below
	// From: the capture grid's frames in [Trim.Start, From), all below
	// CleanBefore, so all written by completed traces with these settings.
	Kept int
}

// PlanTrace derives a job's plan from the movie as claimed.
//
// The job starts at min(job.FromFrame, CleanBefore), aligned up to the capture
// grid that begins at Trim.Start. Starting no later than CleanBefore is what
// guarantees that results never mix two jobs: frames at or after CleanBefore
// may belong to a dead or failed job, so they are always retraced.
func PlanTrace(m Movie, job Lease) TracePlan {
	s := m.Settings
	interval := max(s.CaptureInterval, 1)
	from := min(job.FromFrame, m.CleanBefore)
	from = max(from, s.Trim.Start)
	clear := from
	if clear <= s.Trim.Start {
		// Retracing the whole trim: also drop frames an older, wider trim
		// left below Trim.Start.
		clear = 0
	}
	if off := (from - s.Trim.Start) % interval; off != 0 {
		from += interval - off
	}
	p := TracePlan{ClearFrom: clear, From: from, End: s.Trim.End, Interval: interval}
	if below := min(from, s.Trim.End) - s.Trim.Start; below > 0 {
		p.Kept = (below + interval - 1) / interval
	}
	if p.End > from {
		p.Frames = (p.End - from + interval - 1) / interval
	}
	return p
}

// FrameAt returns the i-th frame index of the plan (0 <= i < Frames).
func (p TracePlan) FrameAt(i int) int { return p.From + i*p.Interval }

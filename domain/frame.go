package domain

import "slices"

// Frame is the result of tracing one frame of a movie: where each marker was
// found on the frame with index Index.
//
// Invariant: a stored frame carries the ID of the job that wrote it, and a
// job writes only frames at or after the frame it cleared from (its plan's
// ClearFrom), after clearing them; so below the movie's CleanBefore every
// frame belongs to one completed trace, and results never mix two jobs.
type Frame struct {
	Index  int
	JobID  string
	Points []Point
}

// MaxPixels bounds a point's pixel coordinates (the largest frame side a
// movie may have).
const MaxPixels = 16384

// Point is one marker's position on a frame, in coordinates normalised to
// [0, 1] of the frame's width and height (the same space as Marker), and in
// pixels from the frame's top-left corner (PX = X * width; the top-left
// pixel's center is 0.5, 0.5; 0, 0 when the tracer knows no frame size).
//
// Confidence (0-1) is how well the tracer matched the marker on this frame.
// Invariant: a Lost point has no position (X, Y, PX and PY are 0): the
// tracer did not find the marker well enough and never invents one; its
// Confidence is the best match it rejected.
type Point struct {
	MarkerID   string
	X, Y       float64
	PX, PY     float64
	Confidence float64
	Lost       bool
	// Doubt, when not empty, says why the tracer doubts a reported
	// position (one of PointDoubts): such a point is uncertain, never a
	// confident one. A lost point has none.
	Doubt string
}

// PointDoubts are the tracer's reasons to doubt a reported position: the
// image no longer looks like the marker on its key frame, a jump beyond
// the motion model, two markers merged onto one thing.
var PointDoubts = []string{"appearance", "jump", "merged"}

// Validate checks a frame on its own: a frame index of a movie, a job ID, at
// most MaxMarkers points with unique well-formed marker IDs, coordinates in
// the frame. A tracer's output is validated before it is stored.
func (f Frame) Validate() error {
	if f.Index < 0 || f.Index >= MaxFrameCount {
		return Invalid("frame.index", "must be 0-%d", MaxFrameCount-1)
	}
	if err := validateLeaseID("frame.jobId", f.JobID); err != nil {
		return err
	}
	if len(f.Points) > MaxMarkers {
		return Invalid("frame.points", "at most %d points", MaxMarkers)
	}
	seen := make(map[string]bool, len(f.Points))
	for _, p := range f.Points {
		switch {
		case p.MarkerID == "" || len(p.MarkerID) > MaxMarkerLabel || !movieIDPattern.MatchString(p.MarkerID):
			return Invalid("frame.points.markerId", "must be 1-%d of A-Z a-z 0-9 _ -", MaxMarkerLabel)
		case seen[p.MarkerID]:
			return Invalid("frame.points.markerId", "duplicate marker ID %q", p.MarkerID)
		case !unit(p.X) || !unit(p.Y):
			return Invalid("frame.points.x", "coordinates must be within [0, 1]")
		case !unit(p.Confidence):
			return Invalid("frame.points.confidence", "must be within [0, 1]")
		case !(p.PX >= 0 && p.PX <= MaxPixels) || !(p.PY >= 0 && p.PY <= MaxPixels):
			return Invalid("frame.points.px", "pixel coordinates must be within [0, %d]", MaxPixels)
		case p.Lost && (p.X != 0 || p.Y != 0 || p.PX != 0 || p.PY != 0):
			return Invalid("frame.points.lost", "a lost point has no coordinates")
		case p.Doubt != "" && (p.Lost || !slices.Contains(PointDoubts, p.Doubt)):
			return Invalid("frame.points.doubt", "must be one of %v, on a point that is not lost", PointDoubts)
		}
		seen[p.MarkerID] = true
	}
	return nil
}

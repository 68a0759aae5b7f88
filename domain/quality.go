package domain

import (
	"fmt"
	"math"
	"strings"
)

// MarkerQuality is how one marker fared over a trace, derived from the
// traced points (TraceQuality): on how many frames it was lost, on how many
// its position was doubted, and the first frame it merged with another
// marker (both then follow one thing). The worker stores it with the job's
// record when the job completes (CompleteJob.Quality).
type MarkerQuality struct {
	MarkerID string
	// Frames counts the marker's points over the trace's frames.
	Frames int
	// Lost counts its lost points, Uncertain its doubted ones (a point
	// with a Doubt; the merged ones included).
	Lost, Uncertain int
	// MergedWith is the marker it first merged with ("" when it never
	// did), on frame MergedAt.
	MergedWith string
	MergedAt   int
}

// DoubtMerged is the Doubt of a point whose marker merged with another.
const DoubtMerged = "merged"

// TraceQuality derives each marker's quality from a trace's frames (in
// frame order), in the order of markers. A marker's merge partner is, on
// the first frame its point is merged, the nearest other merged point of
// that frame.
func TraceQuality(markers []Marker, frames []Frame) []MarkerQuality {
	out := make([]MarkerQuality, len(markers))
	at := make(map[string]int, len(markers))
	for i, mk := range markers {
		out[i].MarkerID = mk.ID
		at[mk.ID] = i
	}
	for _, f := range frames {
		for _, p := range f.Points {
			i, ok := at[p.MarkerID]
			if !ok {
				continue
			}
			q := &out[i]
			q.Frames++
			switch {
			case p.Lost:
				q.Lost++
			case p.Doubt != "":
				q.Uncertain++
			}
			if p.Doubt == DoubtMerged && q.MergedWith == "" {
				if other := nearestMerged(f, p); other != "" {
					q.MergedWith, q.MergedAt = other, f.Index
				}
			}
		}
	}
	return out
}

// AddQuality is the quality of a trace whose frames are earlier's then
// later's (TraceQuality of each, in the order of the same markers): counts
// add up, the first merge is kept.
func AddQuality(earlier, later []MarkerQuality) []MarkerQuality {
	if earlier == nil {
		return later
	}
	for i := range earlier {
		if i >= len(later) || later[i].MarkerID != earlier[i].MarkerID {
			continue
		}
		e, l := &earlier[i], later[i]
		e.Frames += l.Frames
		e.Lost += l.Lost
		e.Uncertain += l.Uncertain
		if e.MergedWith == "" {
			e.MergedWith, e.MergedAt = l.MergedWith, l.MergedAt
		}
	}
	return earlier
}

// nearestMerged is the marker of the merged point of f nearest to p (not
// p's own), or "".
func nearestMerged(f Frame, p Point) string {
	best, id := math.Inf(1), ""
	for _, o := range f.Points {
		if o.MarkerID == p.MarkerID || o.Lost || o.Doubt != DoubtMerged {
			continue
		}
		if d := math.Hypot(o.X-p.X, o.Y-p.Y); d < best {
			best, id = d, o.MarkerID
		}
	}
	return id
}

// ValidateQuality checks a job's quality record: at most MaxMarkers
// entries with well-formed marker IDs and counts within their frames.
func ValidateQuality(qs []MarkerQuality) error {
	if len(qs) > MaxMarkers {
		return Invalid("quality", "at most %d markers", MaxMarkers)
	}
	for _, q := range qs {
		switch {
		case !validMarkerID(q.MarkerID) || (q.MergedWith != "" && !validMarkerID(q.MergedWith)) || (q.MergedWith == "" && q.MergedAt != 0):
			return Invalid("quality.markerId", "must be a marker ID")
		case q.Frames < 0 || q.Lost < 0 || q.Uncertain < 0 || q.Lost+q.Uncertain > q.Frames || q.MergedAt < 0 || q.MergedAt >= MaxFrameCount:
			return Invalid("quality", "counts must be within the marker's frames")
		}
	}
	return nil
}

// Sentence says the marker's quality in one line for people, for
// instance "Head: lost in 12% of frames, uncertain in 5%, merged with Tail
// at frame 36". label names a marker by ID.
func (q MarkerQuality) Sentence(label func(id string) string) string {
	var parts []string
	switch {
	case q.Frames == 0:
		parts = append(parts, "not traced")
	case q.Lost == 0 && q.Uncertain == 0:
		parts = append(parts, fmt.Sprintf("found with confidence in all %d frames", q.Frames))
	default:
		parts = append(parts, fmt.Sprintf("lost in %s of frames", percent(q.Lost, q.Frames)),
			fmt.Sprintf("uncertain in %s", percent(q.Uncertain, q.Frames)))
	}
	if q.MergedWith != "" {
		parts = append(parts, fmt.Sprintf("merged with %s at frame %d", label(q.MergedWith), q.MergedAt))
	}
	return label(q.MarkerID) + ": " + strings.Join(parts, ", ")
}

// QualitySentences are the sentences of a job's quality, markers named by
// their labels in the movie (their IDs when they have none or are gone).
func QualitySentences(markers []Marker, qs []MarkerQuality) []string {
	label := func(id string) string {
		for _, m := range markers {
			if m.ID == id && m.Label != "" {
				return m.Label
			}
		}
		return id
	}
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.Sentence(label)
	}
	return out
}

func validMarkerID(id string) bool {
	return id != "" && len(id) <= MaxMarkerLabel && movieIDPattern.MatchString(id)
}

// percent is n of total as a whole percentage that is never 0% for some
// nor 100% for not all.
func percent(n, total int) string {
	p := math.Round(100 * float64(n) / float64(total))
	switch {
	case n > 0 && p == 0:
		return "<1%"
	case n < total && p == 100:
		return ">99%"
	}
	return fmt.Sprintf("%.0f%%", p)
}

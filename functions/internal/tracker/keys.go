package tracker

import (
	"fmt"
	"math"
)

// Key frames after the first: a marker placed later than the others (Add)
// and a marker the user corrected (Rekey) start again on the frame last
// given to New or Step, exactly as New starts a marker on its key frame.

// place starts marker i at x, y on im as on a key frame: its key template
// is cut there, it has no motion and is not lost.
func (t *Tracker) place(im image, i int, x, y float64) (Point, error) {
	if math.IsNaN(x) || math.IsNaN(y) || x < 0 || y < 0 || x > float64(t.w-1) || y > float64(t.h-1) {
		return Point{}, fmt.Errorf("tracker: marker %d at %v,%v is outside the %dx%d frame", i, x, y, t.w, t.h)
	}
	p := t.p
	m := marker{x: x, y: y, conf: 1, kx: x, ky: y}
	m.r = templateRadius(im, x, y, p.TemplateRadius, p.MaxTemplateRadius)
	ts := 2*m.r + 1
	m.key = make([]float32, ts*ts)
	cut(im, x, y, m.r, m.key)
	m.cur = append([]float32(nil), m.key...)
	m.keep(im)
	t.markers[i] = m
	return Point{X: x, Y: y, Confidence: 1}, nil
}

// Add starts one more marker at x, y (pixels) on gray, which must be the
// frame last given to New or Step; the next Step tracks it with the
// others. It returns the marker's point on gray (confidence 1) and its
// index among the tracker's markers (the next one: Add appends).
func (t *Tracker) Add(gray []byte, x, y float64) (Point, int, error) {
	if len(gray) != t.w*t.h {
		return Point{}, 0, ErrFrameSize
	}
	i := len(t.markers)
	t.markers = append(t.markers, marker{})
	pt, err := t.place(image{w: t.w, h: t.h, pix: gray}, i, x, y)
	if err != nil {
		t.markers = t.markers[:i]
		return Point{}, 0, err
	}
	return pt, i, nil
}

// Rekey restarts marker i at x, y (pixels) on gray, which must be the frame
// last given to New or Step: a user's correction, a key frame of that
// marker. What the tracker knew of the marker (its templates, motion, lost
// state) is replaced; the other markers are untouched. It returns the
// marker's point on gray, the correction itself (confidence 1).
func (t *Tracker) Rekey(gray []byte, i int, x, y float64) (Point, error) {
	if len(gray) != t.w*t.h {
		return Point{}, ErrFrameSize
	}
	if i < 0 || i >= len(t.markers) {
		return Point{}, fmt.Errorf("tracker: no marker %d of %d", i, len(t.markers))
	}
	old := t.markers[i]
	pt, err := t.place(image{w: t.w, h: t.h, pix: gray}, i, x, y)
	if err != nil {
		t.markers[i] = old
	}
	return pt, err
}

// Len is the number of markers the tracker follows.
func (t *Tracker) Len() int { return len(t.markers) }

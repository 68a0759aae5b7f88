package tracker

import "math"

// The frame-to-frame chain (issue 24, third session). On real footage a
// target's look changes while it is tracked (a box turning, a cup
// tilting): the evolving template, a blend of past looks pulled back
// toward the key frame's, then lags the change and its match drifts by a
// fraction of a pixel per frame, 2 px over 150 frames on the box clip,
// where OpenCV's pyramidal Lucas-Kanade (frame to frame) stays within
// 0.1 px. So the sub-pixel position of a tracked marker comes from the
// previous frame's image around where the marker was (Lucas-Kanade, as
// PyrLK does), started at the template search's match, and then, as in
// Matthews et al. 2004 ("The template update problem"), is corrected
// against the key frame's template when the image there still looks like
// the key frame: that correction removes the chain's own slow drift (a
// random walk of the per-frame errors, 0.46 px on the clean ground-truth
// clip without it).
const (
	// anchorLikeness: the drift correction runs only where the image at
	// the chained position correlates with the key frame's template at
	// least this much; below it a translation-only alignment with an
	// outdated look is biased (on the box clip it pulled points off by
	// up to 2 px at 0.8).
	anchorLikeness = 0.95
	// anchorShift (px): the corrected position is kept only when it is
	// this close to the chained one (Matthews et al.'s epsilon): a
	// correction that moves further found another optimum.
	anchorShift = 0.5
	// gradualLikeness: a marker whose key-frame likeness fell below
	// Params.KeyConfidence is not doubted for its appearance as long as
	// its look changed gradually: on every frame since it last looked like
	// the key frame, the image at the match correlated at least this much
	// with the previous frame's image at the marker (a turning box: 0.96
	// and more). An occluder sliding over the target changes it faster
	// (TestScenarioOccluderTakesOver fails at 0.9).
	gradualLikeness = 0.95
)

// chain refines the match (x, y): Lucas-Kanade of the previous frame's
// image around the marker's last position (left in sc.prevT), then the
// key frame's drift correction. Where the chain does not converge, the
// evolved template refines the match as before.
func (m *marker) chain(im image, sc *scratch, x, y float64, inside func(x, y float64) bool) (float64, float64) {
	m.cutPrev(sc)
	px, py, ok := refine(im, sc.prevT, m.r, x, y, &sc.g)
	if !ok || !inside(px, py) {
		return m.refineCur(im, sc, x, y, inside)
	}
	if len(sc.patch) != len(m.key) {
		sc.patch = make([]float32, len(m.key))
	}
	cut(im, px, py, m.r, sc.patch)
	if zncc(sc.prevT, sc.patch) < gradualLikeness {
		// Consecutive frames differ (noise, blur, a fast change): one
		// frame's image is a noisy template and the chain would random-walk
		// (1.8 px on the noisy rotation clip); the evolved template, an
		// average of past looks, refines the match as before.
		return m.refineCur(im, sc, x, y, inside)
	}
	if zncc(m.key, sc.patch) >= anchorLikeness {
		if kx, ky, ok := refine(im, m.key, m.r, px, py, &sc.g); ok && inside(kx, ky) && math.Hypot(kx-px, ky-py) <= anchorShift {
			return kx, ky
		}
	}
	return px, py
}

// refineCur refines the match (x, y) with the evolved template.
func (m *marker) refineCur(im image, sc *scratch, x, y float64, inside func(x, y float64) bool) (float64, float64) {
	if cx, cy, ok := refine(im, m.cur, m.r, x, y, &sc.g); ok && inside(cx, cy) {
		return cx, cy
	}
	return x, y
}

// cutPrev samples the previous frame's image around the marker's last
// position into sc.prevT.
func (m *marker) cutPrev(sc *scratch) {
	side := 2*(m.r+fbReach) + 1
	prev := image{w: side, h: side, pix: m.prev}
	if len(sc.prevT) != len(m.key) {
		sc.prevT = make([]float32, len(m.key))
	}
	cut(prev, m.x-float64(m.prevX), m.y-float64(m.prevY), m.r, sc.prevT)
}

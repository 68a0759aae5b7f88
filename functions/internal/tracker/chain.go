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
	// chainLikeness: where the key frame's correction does not apply, the
	// chain alone carries the point only while consecutive frames are this
	// alike (the image at the chained position against the previous
	// frame's). Below it the evolved template refines the match. Why
	// (issue 24, fourth session): a translation-only Lucas-Kanade step
	// between two frames of a rotating texture is biased by a fraction of a
	// pixel in a direction set by the texture, and uncorrected the bias
	// adds up frame after frame: on the rotation ground-truth clip the
	// 1.7 deg/frame target (consecutive likeness 0.955-0.978 under noise
	// sigma 6) was chained alone on 289 of 299 frames and drifted to 3.6 px
	// (mean 2.6 px; clip mean 1.40 px against 0.81 before the chain), and
	// the fast-blur clip's target whose blur turns with its path went to
	// 0.42 px (clip 0.26 against 0.19). The real clips the chain was made
	// for chain at 0.97-0.999 (median 0.993-0.996 on box and megamind).
	// Measured (gray frames of make bench-tracer, 300 frames; tuning clips
	// box, megamind at 150 frames): 0.97 gives rotation 0.86 px; 0.975
	// 0.82; 0.98 0.81 and fast-blur 0.19 (the errors before the chain),
	// the tuning clips' coverage unchanged (47%); 0.99 loses a box point
	// to a silent one.
	chainLikeness = 0.98
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
	likeness := zncc(sc.prevT, sc.patch)
	if likeness < gradualLikeness {
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
	if likeness < chainLikeness {
		// Not corrected by the key frame and consecutive frames not alike
		// enough for the chain's bias to stay small: the evolved template.
		return m.refineCur(im, sc, x, y, inside)
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

// Package tracker follows points through grayscale frames by template
// matching, in pure Go.
//
// For each marker it cuts a template around the marker on the key frame. On
// every traced frame it predicts the marker's position from its last motion
// (constant velocity), computes the zero-mean normalised cross-correlation
// (ZNCC) of the template at every whole-pixel position of a search window
// around the prediction, takes the best, and refines it to sub-pixel
// precision: a 2-D quadratic fit of the 3x3 scores around it, then a few
// Lucas-Kanade (Gauss-Newton) iterations of the translation, gain and
// offset of the previous frame's image around the marker on the bilinearly
// sampled frame (the frame-to-frame chain), corrected against the key
// frame's template while the marker still looks like it (chain.go). The ZNCC
// peak is the match's confidence (0-1): below Params.MinConfidence the point
// is lost, reported without coordinates, and searched for in a wider window
// until a match reaches Params.ReacquireConfidence again.
//
// The template evolves to follow changes of appearance (rotation, lighting):
// after a confident match it moves Params.Evolve of the way toward the image
// at the match, then Params.Tether of the way back toward the key frame's
// template, which limits drift. This is the design of the Open Source
// Physics Tracker's autotracker ("evolution rate" and "tether"), with ZNCC
// instead of its RGB square deviation, so uniform changes of brightness and
// contrast do not matter.
//
// A Tracker's whole state (positions, velocities, templates, lost flags)
// marshals to bytes and back, so a trace split into segments gives exactly
// the points of an uninterrupted one.
package tracker

import "fmt"

// Params tune the tracker. Zero fields take the defaults of DefaultParams.
type Params struct {
	// TemplateRadius r: templates are (2r+1) x (2r+1) pixels, or larger,
	// up to MaxTemplateRadius, for a marker whose surroundings have
	// structure in one direction only at this size (see templateRadius).
	TemplateRadius    int
	MaxTemplateRadius int
	// SearchRadius: whole-pixel positions up to this far (in x and in y)
	// from the predicted position are tried.
	SearchRadius int
	// LostSearchRadius: the search radius while a marker is lost.
	LostSearchRadius int
	// MinConfidence: a best match below it makes the point lost.
	MinConfidence float64
	// ReacquireConfidence: a lost marker is found again only by a match at
	// least this good.
	ReacquireConfidence float64
	// KeyConfidence: a match whose image correlates (ZNCC) less than this
	// with the key frame's template is uncertain (DoubtAppearance), unless
	// its look changed only gradually since it last reached it (see
	// gradualLikeness).
	KeyConfidence float64
	// FBError: the forward-backward check of every frame. The image at the
	// match is searched for back in the previous frame around where the
	// marker was; landing more than FBError px away (or matching below
	// MinConfidence there) makes the point lost.
	FBError float64
	// EvolveConfidence: the template evolves only after a match at least
	// this good (never toward an occluder).
	EvolveConfidence float64
	// Evolve is the evolution rate (0-1): how far the template moves toward
	// the matched image after each confident match.
	Evolve float64
	// Tether (0-1): how far the template is then pulled back toward the key
	// frame's template.
	Tether float64
}

// DefaultParams are the parameters the product uses (and the benchmark
// prints).
var DefaultParams = Params{
	TemplateRadius:      10,
	MaxTemplateRadius:   24,
	SearchRadius:        20,
	LostSearchRadius:    48,
	MinConfidence:       0.5,
	ReacquireConfidence: 0.85,
	KeyConfidence:       0.5,
	FBError:             1,
	EvolveConfidence:    0.6,
	Evolve:              0.5,
	Tether:              0.15,
}

// withDefaults fills zero fields from DefaultParams and checks the result.
func (p Params) withDefaults() (Params, error) {
	d := DefaultParams
	if p.TemplateRadius == 0 {
		p.TemplateRadius = d.TemplateRadius
	}
	if p.MaxTemplateRadius == 0 {
		p.MaxTemplateRadius = max(d.MaxTemplateRadius, p.TemplateRadius)
	}
	if p.SearchRadius == 0 {
		p.SearchRadius = d.SearchRadius
	}
	if p.LostSearchRadius == 0 {
		p.LostSearchRadius = max(d.LostSearchRadius, p.SearchRadius)
	}
	if p.MinConfidence == 0 {
		p.MinConfidence = d.MinConfidence
	}
	if p.ReacquireConfidence == 0 {
		p.ReacquireConfidence = max(d.ReacquireConfidence, p.MinConfidence)
	}
	if p.KeyConfidence == 0 {
		p.KeyConfidence = d.KeyConfidence
	}
	if p.FBError == 0 {
		p.FBError = d.FBError
	}
	if p.EvolveConfidence == 0 {
		p.EvolveConfidence = max(d.EvolveConfidence, p.MinConfidence)
	}
	if p.Evolve == 0 {
		p.Evolve = d.Evolve
	}
	if p.Tether == 0 {
		p.Tether = d.Tether
	}
	switch {
	case p.TemplateRadius < 2 || p.MaxTemplateRadius < p.TemplateRadius || p.MaxTemplateRadius > 64:
		return p, fmt.Errorf("tracker: template radii %d-%d must be within 2-64", p.TemplateRadius, p.MaxTemplateRadius)
	case p.SearchRadius < 1 || p.SearchRadius > 256 || p.LostSearchRadius < p.SearchRadius || p.LostSearchRadius > 512:
		return p, fmt.Errorf("tracker: search radii %d/%d must be 1-256 and 512 while lost", p.SearchRadius, p.LostSearchRadius)
	case !(p.MinConfidence > 0 && p.MinConfidence < 1) || !(p.ReacquireConfidence >= p.MinConfidence && p.ReacquireConfidence < 1) ||
		!(p.EvolveConfidence >= p.MinConfidence && p.EvolveConfidence <= 1) ||
		!(p.KeyConfidence > 0 && p.KeyConfidence < 1) || !(p.FBError > 0 && p.FBError <= fbReach):
		return p, fmt.Errorf("tracker: confidences %v/%v/%v out of order", p.MinConfidence, p.ReacquireConfidence, p.EvolveConfidence)
	case !(p.Evolve >= 0 && p.Evolve <= 1) || !(p.Tether >= 0 && p.Tether <= 1):
		return p, fmt.Errorf("tracker: rates %v/%v must be within [0, 1]", p.Evolve, p.Tether)
	}
	return p, nil
}

// String is the parameters as the benchmark prints them.
func (p Params) String() string {
	return fmt.Sprintf("template %dx%d px (up to %dx%d where one-directional), search ±%d px (±%d lost), lost below ZNCC %.2f, re-acquire at %.2f, key-frame likeness uncertain below %.2f, lost when the one-frame forward-backward error exceeds %.1f px, evolve %.2f above %.2f, tether %.2f",
		2*p.TemplateRadius+1, 2*p.TemplateRadius+1, 2*p.MaxTemplateRadius+1, 2*p.MaxTemplateRadius+1, p.SearchRadius, p.LostSearchRadius,
		p.MinConfidence, p.ReacquireConfidence, p.KeyConfidence, p.FBError, p.Evolve, p.EvolveConfidence, p.Tether)
}

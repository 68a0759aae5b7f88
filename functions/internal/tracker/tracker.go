package tracker

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Point is a marker on one frame, in pixels (the center of the top-left
// pixel is 0, 0). A lost point has no coordinates (X and Y are 0): only the
// confidence of the best match that was found, and rejected.
type Point struct {
	X, Y       float64
	Confidence float64 // ZNCC of the match, clamped to [0, 1]
	Lost       bool
	// Doubt, when not empty, says why the position is uncertain (one of
	// the Doubt constants): a position is reported, but a check doubts it.
	// Such a point is never a confident one.
	Doubt Doubt
}

// Uncertain reports whether a check doubts the point's position.
func (p Point) Uncertain() bool { return p.Doubt != "" }

// Doubt is why a reported position is uncertain.
type Doubt string

// The checks that make a reported point uncertain.
const (
	// DoubtAppearance: the image at the point no longer looks like the
	// marker on the key frame (ZNCC with the key frame's template below
	// Params.KeyConfidence): the evolving template was taken over by
	// something else (an occluder, the background).
	DoubtAppearance Doubt = "appearance"
	// DoubtJump: the point moved further from where its motion predicted
	// than the search window (it was found by the edge re-search).
	DoubtJump Doubt = "jump"
	// DoubtMerged: another marker that started more than a template away
	// is now within a template radius of this one: both follow one thing.
	DoubtMerged Doubt = "merged"
)

// Tracker follows markers from a key frame through the next frames given
// to Step, one after the other.
type Tracker struct {
	p       Params
	w, h    int
	steps   int // frames stepped since the key frame
	markers []marker
	// scratch, one per marker: never part of the state.
	scratch []scratch
}

// marker is one marker's whole tracking state.
type marker struct {
	r       int     // template radius
	x, y    float64 // last position seen
	vx, vy  float64 // motion per frame step when last seen
	lostFor int     // frames since last seen (0: seen on the last frame)
	conf    float64 // confidence on the last frame
	kx, ky  float64 // position on the key frame
	// prev is the last frame the marker was seen on, around where it was:
	// (2(r+fbReach)+1)^2 whole pixels from (prevX, prevY), its top-left.
	prev         []byte
	prevX, prevY int
	key          []float32
	cur          []float32
	// abrupt: the marker's look changed abruptly (a frame-to-frame
	// likeness below gradualLikeness) since it last looked like the key
	// frame.
	abrupt bool
}

type scratch struct {
	s     searcher
	a, b  prepared
	patch []float32
	prevT []float32
	g     grids
}

// ErrFrameSize is returned by Step for a frame of another size than the
// key frame's.
var ErrFrameSize = errors.New("tracker: frame size differs from the key frame's")

// New starts tracking markers at the given pixel positions on the key frame
// (w x h gray pixels). It returns the key frame's points: where the markers
// were placed, confidence 1.
func New(p Params, key []byte, w, h int, at [][2]float64) (*Tracker, []Point, error) {
	p, err := p.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	if w <= 0 || h <= 0 || len(key) != w*h {
		return nil, nil, fmt.Errorf("tracker: key frame of %d bytes for %dx%d", len(key), w, h)
	}
	t := &Tracker{p: p, w: w, h: h, markers: make([]marker, len(at))}
	im := image{w: w, h: h, pix: key}
	pts := make([]Point, len(at))
	for i, xy := range at {
		pt, err := t.place(im, i, xy[0], xy[1])
		if err != nil {
			return nil, nil, err
		}
		pts[i] = pt
	}
	t.scratch = make([]scratch, len(at))
	return t, pts, nil
}

// Size returns the frame size the tracker expects.
func (t *Tracker) Size() (int, int) { return t.w, t.h }

// Params returns the parameters in use (defaults filled in).
func (t *Tracker) Params() Params { return t.p }

// Step tracks every marker into the next frame and returns their points,
// in the order of the markers given to New. Markers are tracked in
// parallel when there are several and more than one CPU.
func (t *Tracker) Step(gray []byte) ([]Point, error) {
	if len(gray) != t.w*t.h {
		return nil, ErrFrameSize
	}
	im := image{w: t.w, h: t.h, pix: gray}
	pts := make([]Point, len(t.markers))
	if len(t.scratch) != len(t.markers) {
		t.scratch = make([]scratch, len(t.markers))
	}
	workers := min(runtime.GOMAXPROCS(0), len(t.markers))
	if workers <= 1 {
		for i := range t.markers {
			pts[i] = t.track(im, i)
		}
	} else {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < len(t.markers); i += workers {
					pts[i] = t.track(im, i)
				}
			})
		}
		wg.Wait()
	}
	t.merged(pts)
	t.steps++
	return pts, nil
}

// track moves marker i into the frame im.
func (t *Tracker) track(im image, i int) Point {
	m, sc, p := &t.markers[i], &t.scratch[i], t.p
	r := m.r
	k := float64(m.lostFor + 1)
	px := clamp(m.x+m.vx*k, 0, float64(t.w-1))
	py := clamp(m.y+m.vy*k, 0, float64(t.h-1))
	cx, cy := int(math.Round(px)), int(math.Round(py))

	var best match
	var doubt Doubt
	threshold := p.MinConfidence
	if m.lostFor == 0 {
		prepare(m.cur, &sc.a)
		best = sc.s.search(im, &sc.a, r, cx, cy, p.SearchRadius)
		if best.edge && best.score >= p.MinConfidence {
			// The marker moved further than predicted: search again around
			// the edge position (once), keeping the better match, which is
			// a jump beyond the motion model.
			if again := sc.s.search(im, &sc.a, r, int(math.Round(best.x)), int(math.Round(best.y)), p.SearchRadius); again.score > best.score {
				best, doubt = again, DoubtJump
			}
		}
	} else {
		// Lost: a wider window around where the motion would have taken it,
		// with both the evolved and the key frame's template.
		threshold = p.ReacquireConfidence
		prepare(m.cur, &sc.a)
		best = sc.s.search(im, &sc.a, r, cx, cy, p.LostSearchRadius)
		prepare(m.key, &sc.b)
		if withKey := sc.s.search(im, &sc.b, r, cx, cy, p.LostSearchRadius); withKey.score > best.score {
			best = withKey
		}
	}
	conf := clamp(best.score, 0, 1)
	if best.score < threshold || best.x < 0 || best.y < 0 || best.x > float64(t.w-1) || best.y > float64(t.h-1) {
		m.lostFor++
		m.conf = conf
		return Point{Confidence: conf, Lost: true}
	}
	tpl := m.cur
	if m.lostFor > 0 {
		tpl = m.key
	}
	inside := func(x, y float64) bool { return x >= 0 && y >= 0 && x <= float64(t.w-1) && y <= float64(t.h-1) }
	if m.lostFor == 0 {
		best.x, best.y = m.chain(im, sc, best.x, best.y, inside)
	} else if x, y, ok := refine(im, tpl, r, best.x, best.y, &sc.g); ok && inside(x, y) {
		best.x, best.y = x, y
	}
	if len(sc.patch) != len(m.cur) {
		sc.patch = make([]float32, len(m.cur))
	}
	cut(im, best.x, best.y, r, sc.patch)
	lose := func() Point {
		m.lostFor++
		m.conf = conf
		return Point{Confidence: conf, Lost: true}
	}
	if m.lostFor == 0 && !m.backCheck(sc, p) {
		return lose()
	}
	key := zncc(m.key, sc.patch)
	if m.lostFor > 0 && key < p.ReacquireConfidence {
		// Re-acquired onto something else: a re-acquisition must look like
		// the key frame's marker as much as a re-acquisition requires (the
		// evolved template alone re-acquired onto other things after a
		// scene cut: issue 24, the tuning clips).
		return lose()
	}
	// Appearance: a point that no longer looks like the key frame's marker
	// is uncertain, unless its look changed gradually since it last did
	// (gradualLikeness: a target turning, not an occluder taking over).
	if m.lostFor > 0 || key >= p.KeyConfidence {
		m.abrupt = false
	} else if zncc(sc.prevT, sc.patch) < gradualLikeness {
		m.abrupt = true
	}
	if key < p.KeyConfidence && m.abrupt {
		doubt = DoubtAppearance
	}
	m.vx, m.vy = (best.x-m.x)/k, (best.y-m.y)/k
	m.x, m.y, m.lostFor, m.conf = best.x, best.y, 0, conf
	m.keep(im)
	if doubt != DoubtJump && best.score >= p.EvolveConfidence && (p.Evolve > 0 || p.Tether > 0) {
		e, te := float32(p.Evolve), float32(p.Tether)
		for j := range m.cur {
			v := m.cur[j]*(1-e) + sc.patch[j]*e
			m.cur[j] = v*(1-te) + m.key[j]*te
		}
	}
	// The reported confidence is the lesser of the match's score and its
	// likeness to the key frame's marker.
	return Point{X: best.x, Y: best.y, Confidence: clamp(min(conf, key), 0, 1), Doubt: doubt}
}

// fbReach is how far (whole px) the forward-backward check searches
// around the previous position.
const fbReach = 3

// keep stores the frame around the marker's position for the next frame's
// forward-backward check.
func (m *marker) keep(im image) {
	side := 2*(m.r+fbReach) + 1
	if len(m.prev) != side*side {
		m.prev = make([]byte, side*side)
	}
	m.prevX, m.prevY = int(math.Round(m.x))-m.r-fbReach, int(math.Round(m.y))-m.r-fbReach
	for i := range side {
		for j := range side {
			m.prev[i*side+j] = byte(im.at(m.prevX+j, m.prevY+i))
		}
	}
}

// backCheck is the forward-backward check: the image at the match
// (sc.patch) searched for in the previous frame around the marker's last
// position must land within p.FBError px of it, with a good score.
func (m *marker) backCheck(sc *scratch, p Params) bool {
	side := 2*(m.r+fbReach) + 1
	prev := image{w: side, h: side, pix: m.prev}
	prepare(sc.patch, &sc.b)
	lx, ly := m.x-float64(m.prevX), m.y-float64(m.prevY)
	back := sc.s.search(prev, &sc.b, m.r, int(math.Round(lx)), int(math.Round(ly)), fbReach-1)
	return back.score >= p.MinConfidence && math.Hypot(back.x-lx, back.y-ly) <= p.FBError
}

// merged marks uncertain every pair of reported points within a template
// radius of each other whose markers started more than a template apart:
// both now follow one thing, at most one of them rightly.
func (t *Tracker) merged(pts []Point) {
	for i := range pts {
		for j := i + 1; j < len(pts); j++ {
			a, b := &t.markers[i], &t.markers[j]
			if pts[i].Lost || pts[j].Lost {
				continue
			}
			near := float64(max(a.r, b.r))
			if math.Hypot(pts[i].X-pts[j].X, pts[i].Y-pts[j].Y) < near && math.Hypot(a.kx-b.kx, a.ky-b.ky) > 2*near {
				pts[i].Doubt, pts[j].Doubt = DoubtMerged, DoubtMerged
			}
		}
	}
}

// zncc is the zero-mean normalised cross-correlation of two patches of one
// size (0 when either is flat).
func zncc(a, b []float32) float64 {
	var ma, mb float64
	for i := range a {
		ma += float64(a[i])
		mb += float64(b[i])
	}
	ma /= float64(len(a))
	mb /= float64(len(b))
	var ab, aa, bb float64
	for i := range a {
		da, db := float64(a[i])-ma, float64(b[i])-mb
		ab += da * db
		aa += da * da
		bb += db * db
	}
	if aa < 1e-6 || bb < 1e-6 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// templateRadius is the radius of a marker's template: min, unless the
// (2*min+1)^2 window has structure in one direction only (its structure
// tensor's eigenvalue ratio is below 1/4: an edge, a featureless elongated
// body), which a template cannot locate along the other. Then the window
// grows, 2 px at a time, until its structure stops changing (the ratio
// gains under 5%: the whole body is inside), plus a 6 px margin, up to max.
func templateRadius(im image, x, y float64, lo, hi int) int {
	small, large := structure(im, x, y, lo)
	if large <= 0 || small/large >= 0.25 {
		return lo
	}
	ratio := small / large
	for r := lo + 2; r <= hi; r += 2 {
		s, l := structure(im, x, y, r)
		next := 0.0
		if l > 0 {
			next = s / l
		}
		if next < ratio*1.05 {
			return min(r-2+6, hi)
		}
		ratio = next
	}
	return hi
}

func clamp(v, lo, hi float64) float64 { return min(max(v, lo), hi) }

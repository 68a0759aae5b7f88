// Package groundtruth renders synthetic movies with known answers for the
// tracker: textured disc targets on a textured background, moving along
// smooth known paths, in the conditions the tracker must survive (clean,
// fast motion with blur, noise and brightness drift with rotating targets,
// occlusion). Every frame is a pure function of the scene and the frame
// index, so clips are reproducible and can be rendered in any order.
package groundtruth

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Conditions the benchmark runs, in order.
var Conditions = []string{"clean", "fast-blur", "rotate-noise-drift", "occlusion"}

// TargetRadius is the radius of every target disc, in pixels.
const TargetRadius = 16

// Scene is one synthetic clip.
type Scene struct {
	Name          string
	Width, Height int
	Frames        int
	Description   string

	bg      []float32 // static background texture, Width x Height
	targets []target
	blur    int     // sub-frame samples averaged (motion blur); 1 = none
	shutter float64 // fraction of the frame interval the shutter is open
	noise   float64 // Gaussian noise sigma (gray levels)
	drift   bool    // global gain/offset drift
	occ     *rect   // an opaque textured occluder in front of the targets
	occTex  []float32
	seed    uint64
}

type target struct {
	tex      []float32 // texSide x texSide
	cx, cy   float64   // path center
	ax, ay   float64   // amplitudes
	wx, wy   float64   // angular frequency per frame
	phx, phy float64
	spin     float64 // rotation per frame (radians)
}

type rect struct{ x0, y0, x1, y1 float64 }

const texSide = 64

// Truth is a target's true state on one frame.
type Truth struct {
	X, Y float64 // center, pixels
	// Covered is the fraction of the target disc hidden by the occluder.
	Covered float64
}

// New returns the scene for a condition, w x h pixels, frames long.
func New(condition string, w, h, frames int) (*Scene, error) {
	if w < 160 || h < 120 || frames < 2 {
		return nil, fmt.Errorf("groundtruth: %dx%d, %d frames is too small", w, h, frames)
	}
	s := &Scene{Name: condition, Width: w, Height: h, Frames: frames, blur: 1, seed: 7}
	rng := rand.New(rand.NewPCG(1, 2))
	s.bg = texture(rng, w, h, 2)
	fw, fh := float64(w), float64(h)
	slow := func(i int) target { // a gentle Lissajous path, about 1-3 px per frame
		return target{cx: fw * (0.25 + 0.25*float64(i)), cy: fh * (0.35 + 0.3*float64(i%2)),
			ax: fw * 0.08, ay: fh * 0.12, wx: 2 * math.Pi / 90, wy: 2 * math.Pi / 70, phx: float64(i), phy: 2 * float64(i)}
	}
	switch condition {
	case "clean":
		s.targets = []target{slow(0), slow(1), slow(2)}
		s.Description = "3 targets, 1-3 px/frame, no blur, no noise"
	case "fast-blur":
		// Circles at 12 px per frame, blurred over half the frame interval.
		for i := range 3 {
			r := fw * 0.12
			t := target{cx: fw * (0.2 + 0.3*float64(i)), cy: fh * 0.5, ax: r, ay: r, wx: 12 / r, wy: 12 / r,
				phx: math.Pi/2 + float64(i), phy: float64(i)}
			if i == 1 {
				t.wx, t.wy = -t.wx, -t.wy
			}
			s.targets = append(s.targets, t)
		}
		s.blur, s.shutter = 7, 0.5
		s.Description = "3 targets on circles at 12 px/frame, motion blur over half a frame"
	case "rotate-noise-drift":
		for i := range 3 {
			t := slow(i)
			t.spin = 0.03 * float64(1+i) // 1.7-5.2 degrees per frame
			s.targets = append(s.targets, t)
		}
		s.noise, s.drift = 6, true
		s.Description = "3 targets rotating 1.7, 3.4 and 5.2 deg/frame, Gaussian noise sigma 6, brightness gain 0.7-1.3 and offset ±20 drifting"
	case "occlusion":
		// One target swings left and right across an opaque bar in the
		// middle (4 px per frame as it passes behind it, every 150 frames);
		// the other two move freely above and below.
		amp := fw * 0.3
		a := target{cx: fw * 0.5, cy: fh * 0.5, ax: amp, wx: 4 / amp, phx: -math.Pi / 2}
		s.targets = []target{a, slow(1), slow(2)}
		s.targets[1].cy, s.targets[2].cy = fh*0.2, fh*0.8
		s.targets[1].ay, s.targets[2].ay = fh*0.05, fh*0.05
		s.occ = &rect{x0: fw*0.5 - 22, y0: fh*0.5 - 40, x1: fw*0.5 + 22, y1: fh*0.5 + 40}
		s.occTex = texture(rand.New(rand.NewPCG(5, 6)), texSide, texSide, 1)
		s.Description = "1 target swinging across a 44 px opaque bar (4 px/frame behind it, over half hidden for ~11 frames, wholly for ~3, at frames 75, 225, ...), 2 free"
	default:
		return nil, fmt.Errorf("groundtruth: unknown condition %q", condition)
	}
	for i := range s.targets {
		t := &s.targets[i]
		t.tex = texture(rng, texSide, texSide, 1)
	}
	return s, nil
}

func (t target) pos(f float64) (float64, float64) {
	x := t.cx + t.ax*math.Sin(t.wx*f+t.phx)
	y := t.cy + t.ay*math.Sin(t.wy*f+t.phy)
	return x, y
}

// Truth returns every target's true state on frame i.
func (s *Scene) Truth(i int) []Truth {
	out := make([]Truth, len(s.targets))
	for k, t := range s.targets {
		x, y := t.pos(float64(i))
		out[k] = Truth{X: x, Y: y, Covered: s.covered(x, y)}
	}
	return out
}

// covered is the fraction of a disc at (x, y) inside the occluder.
func (s *Scene) covered(x, y float64) float64 {
	if s.occ == nil {
		return 0
	}
	in, all := 0, 0
	for dy := -TargetRadius; dy <= TargetRadius; dy++ {
		for dx := -TargetRadius; dx <= TargetRadius; dx++ {
			if dx*dx+dy*dy > TargetRadius*TargetRadius {
				continue
			}
			all++
			px, py := x+float64(dx), y+float64(dy)
			if px >= s.occ.x0 && px < s.occ.x1 && py >= s.occ.y0 && py < s.occ.y1 {
				in++
			}
		}
	}
	return float64(in) / float64(all)
}

// Render draws frame i into gray (Width*Height bytes).
func (s *Scene) Render(i int, gray []byte) {
	w, h := s.Width, s.Height
	acc := make([]float32, w*h)
	for k := range s.blur {
		f := float64(i)
		if s.blur > 1 {
			f += s.shutter * (float64(k)/float64(s.blur-1) - 0.5)
		}
		s.draw(f, acc, 1/float32(s.blur))
	}
	gain, offset := float32(1), float32(0)
	if s.drift {
		gain = float32(1 + 0.3*math.Sin(2*math.Pi*float64(i)/80))
		offset = float32(20 * math.Sin(2*math.Pi*float64(i)/55))
	}
	rng := rand.New(rand.NewPCG(s.seed, uint64(i)))
	for j, v := range acc {
		v = v*gain + offset
		if s.noise > 0 {
			v += float32(rng.NormFloat64() * s.noise)
		}
		gray[j] = byte(min(max(math.Round(float64(v)), 0), 255))
	}
}

// draw adds weight times the scene at (fractional) frame f to acc.
func (s *Scene) draw(f float64, acc []float32, weight float32) {
	w, h := s.Width, s.Height
	layer := make([]float32, w*h)
	copy(layer, s.bg)
	for _, t := range s.targets {
		x, y := t.pos(f)
		ang := t.spin * f
		sin, cos := math.Sin(-ang), math.Cos(-ang)
		r := float64(TargetRadius)
		for py := max(int(y-r-2), 0); py <= min(int(y+r+2), h-1); py++ {
			for px := max(int(x-r-2), 0); px <= min(int(x+r+2), w-1); px++ {
				dx, dy := float64(px)-x, float64(py)-y
				d := math.Hypot(dx, dy)
				alpha := min(max(r-d+0.5, 0), 1)
				if alpha == 0 {
					continue
				}
				// Target-local texture coordinates, rotated with the target.
				u := cos*dx - sin*dy + texSide/2
				v := sin*dx + cos*dy + texSide/2
				c := sampleTex(t.tex, u, v)
				if d > r-3 {
					c *= 0.35 // a dark rim
				}
				layer[py*w+px] = layer[py*w+px]*float32(1-alpha) + c*float32(alpha)
			}
		}
	}
	if o := s.occ; o != nil {
		for py := max(int(o.y0), 0); py < min(int(math.Ceil(o.y1)), h); py++ {
			for px := max(int(o.x0), 0); px < min(int(math.Ceil(o.x1)), w); px++ {
				layer[py*w+px] = 40 + 0.5*sampleTex(s.occTex, float64(px%texSide), float64(py%texSide))
			}
		}
	}
	for j, v := range layer {
		acc[j] += v * weight
	}
}

// texture is smoothed uniform noise, stretched to 30-225, w x h.
func texture(rng *rand.Rand, w, h, passes int) []float32 {
	t := make([]float32, w*h)
	for i := range t {
		t[i] = rng.Float32()
	}
	tmp := make([]float32, w*h)
	for range passes {
		for y := range h {
			for x := range w {
				var sum float32
				for d := -1; d <= 1; d++ {
					sum += t[y*w+min(max(x+d, 0), w-1)]
				}
				tmp[y*w+x] = sum / 3
			}
		}
		for y := range h {
			for x := range w {
				var sum float32
				for d := -1; d <= 1; d++ {
					sum += tmp[min(max(y+d, 0), h-1)*w+x]
				}
				t[y*w+x] = sum / 3
			}
		}
	}
	lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
	for _, v := range t {
		lo, hi = min(lo, v), max(hi, v)
	}
	for i, v := range t {
		t[i] = 30 + 195*(v-lo)/(hi-lo)
	}
	return t
}

// sampleTex is the bilinear sample of a texSide^2 texture, wrapping.
func sampleTex(t []float32, u, v float64) float32 {
	fu, fv := math.Floor(u), math.Floor(v)
	au, av := float32(u-fu), float32(v-fv)
	x0, y0 := wrap(int(fu)), wrap(int(fv))
	x1, y1 := wrap(x0+1), wrap(y0+1)
	top := t[y0*texSide+x0]*(1-au) + t[y0*texSide+x1]*au
	bot := t[y1*texSide+x0]*(1-au) + t[y1*texSide+x1]*au
	return top*(1-av) + bot*av
}

func wrap(i int) int { return ((i % texSide) + texSide) % texSide }

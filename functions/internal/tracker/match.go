package tracker

import "math"

// image is one 8-bit gray frame, row-major.
type image struct {
	w, h int
	pix  []byte
}

// at is the pixel at (x, y), the nearest edge pixel outside the frame.
func (im image) at(x, y int) float32 {
	x = min(max(x, 0), im.w-1)
	y = min(max(y, 0), im.h-1)
	return float32(im.pix[y*im.w+x])
}

// cut samples the (2r+1)^2 patch centered at (cx, cy) into dst.
func cut(im image, cx, cy float64, r int, dst []float32) {
	side := 2*r + 1
	im.grid(cx-float64(r), cy-float64(r), side, side, dst)
}

// prepared is a template ready for ZNCC: zero mean and its norm.
type prepared struct {
	z    []float32
	norm float64 // sqrt(sum z^2); 0 for a flat template
}

func prepare(t []float32, dst *prepared) {
	if cap(dst.z) < len(t) {
		dst.z = make([]float32, len(t))
	}
	dst.z = dst.z[:len(t)]
	var mean float64
	for _, v := range t {
		mean += float64(v)
	}
	mean /= float64(len(t))
	var ss float64
	for i, v := range t {
		d := float64(v) - mean
		dst.z[i] = float32(d)
		ss += d * d
	}
	dst.norm = math.Sqrt(ss)
}

// searcher holds one marker's reusable buffers for search.
type searcher struct {
	full plane // the frame around the search window, edge-clamped
	half plane // the same at half resolution (2x2 block sums)
	ht   prepared
	ts   int // template side
	off  int // full-region offset of the window's center candidate
}

// plane is a region of pixels with the integral images of its values and
// their squares, so a window's mean and variance cost four lookups each.
type plane struct {
	pix     []float32
	sum, sq []float64
	side    int
}

// match is the best position of a search.
type match struct {
	x, y  float64 // sub-pixel position in the frame
	score float64 // ZNCC at the best whole-pixel position
	edge  bool    // the best whole-pixel position is on the window's edge
}

// coarseStride is the candidate spacing of the first pass of a search
// wider than coarseFrom: every other pixel, scored at half resolution (the
// frame and the template in 2x2 blocks, a quarter of the products), then
// every pixel around the best at full resolution. A textured template's
// ZNCC peak is a few pixels wide, so the coarse pass still lands next to
// it (issue 24: the tracker's cost).
const (
	coarseStride = 2
	coarseFrom   = 6
)

// search finds tpl (template radius r) in the frame within ±rad whole
// pixels of (cx, cy): ZNCC at each candidate position (coarse then fine
// when the window is wide), the best one refined by a 2-D quadratic fit of
// the 3x3 scores around it.
func (s *searcher) search(im image, tpl *prepared, r, cx, cy, rad int) match {
	if tpl.norm < 1e-6 {
		return match{x: float64(cx), y: float64(cy)}
	}
	s.load(im, r, cx, cy, rad+coarseStride+1)
	bx, by, best := 0, 0, math.Inf(-1)
	lo, hi := -rad, rad
	if rad > coarseFrom {
		cbx, cby := s.coarse(tpl, rad)
		lo, hi = -1, 1
		bx, by = cbx, cby
	}
	ox, oy := bx, by
	for dy := max(oy+lo, -rad); dy <= min(oy+hi, rad); dy++ {
		for dx := max(ox+lo, -rad); dx <= min(ox+hi, rad); dx++ {
			if v := s.full.score(tpl, s.off+dx, s.off+dy, s.ts); v > best {
				bx, by, best = dx, dy, v
			}
		}
	}
	var n [9]float64
	for j := -1; j <= 1; j++ {
		for i := -1; i <= 1; i++ {
			if i == 0 && j == 0 {
				n[4] = best
			} else {
				n[(j+1)*3+i+1] = s.full.score(tpl, s.off+bx+i, s.off+by+j, s.ts)
			}
		}
	}
	px, py := peak(n[:], 3, 1, 1)
	return match{
		x: float64(cx+bx) + px, y: float64(cy+by) + py, score: best,
		edge: bx <= -rad || by <= -rad || bx >= rad || by >= rad,
	}
}

// coarse is the first pass of a wide search: the candidates -rad, -rad+2,
// ... up to rad, in x and y, scored with the template and the region
// summed in 2x2 blocks. A candidate dx puts the template's top-left at
// full-region column off+dx, so with the blocks starting at column phi
// (off-rad-phi even) it is block column (off+dx-phi)/2: the half-resolution
// pass tries exactly the full-resolution candidates it stands for.
func (s *searcher) coarse(tpl *prepared, rad int) (int, int) {
	nb := s.ts / 2 // template blocks per side (its last row and column left out)
	phi := (s.off - rad) & 1
	s.half.shrink(&s.full, phi)
	halve(tpl.z, s.ts, nb, &s.ht)
	bx, by, best := 0, 0, math.Inf(-1)
	for dy := -rad; dy <= rad; dy += coarseStride {
		for dx := -rad; dx <= rad; dx += coarseStride {
			if v := s.half.score(&s.ht, (s.off+dx-phi)/2, (s.off+dy-phi)/2, nb); v > best {
				bx, by, best = dx, dy, v
			}
		}
	}
	return bx, by
}

// halve sums the template z (side ts) in 2x2 blocks, nb per side, into
// dst, zero mean.
func halve(z []float32, ts, nb int, dst *prepared) {
	t := dst.z[:0]
	for i := range nb {
		for j := range nb {
			a, b := z[2*i*ts+2*j:], z[(2*i+1)*ts+2*j:]
			t = append(t, a[0]+a[1]+b[0]+b[1])
		}
	}
	dst.z = t
	prepare(t, dst)
}

// load copies the frame around (cx, cy) for candidates up to ±reach, and
// builds its integral images.
func (s *searcher) load(im image, r, cx, cy, reach int) {
	ts := 2*r + 1
	side := 2*reach + ts
	x0, y0 := cx-reach-r, cy-reach-r
	s.ts, s.off = ts, reach
	s.full.resize(side)
	inside := x0 >= 0 && y0 >= 0 && x0+side <= im.w && y0+side <= im.h
	for i := range side {
		row := s.full.pix[i*side : (i+1)*side]
		if inside {
			src := im.pix[(y0+i)*im.w+x0 : (y0+i)*im.w+x0+side]
			for j, v := range src {
				row[j] = float32(v)
			}
		} else {
			for j := range row {
				row[j] = im.at(x0+j, y0+i)
			}
		}
	}
	s.full.integrate()
}

func (p *plane) resize(side int) {
	n := side * side
	if cap(p.pix) < n {
		p.pix = make([]float32, n)
		p.sum = make([]float64, (side+1)*(side+1))
		p.sq = make([]float64, (side+1)*(side+1))
	}
	p.pix, p.sum, p.sq = p.pix[:n], p.sum[:(side+1)*(side+1)], p.sq[:(side+1)*(side+1)]
	p.side = side
}

// shrink makes p the 2x2 block sums of src's pixels from (phi, phi).
func (p *plane) shrink(src *plane, phi int) {
	side := (src.side - phi) / 2
	p.resize(side)
	for i := range side {
		a := src.pix[(2*i+phi)*src.side+phi:]
		b := src.pix[(2*i+phi+1)*src.side+phi:]
		row := p.pix[i*side : (i+1)*side]
		for j := range row {
			row[j] = a[2*j] + a[2*j+1] + b[2*j] + b[2*j+1]
		}
	}
	p.integrate()
}

// integrate builds the integral images of the pixels and their squares.
func (p *plane) integrate() {
	side, iw := p.side, p.side+1
	for j := range iw {
		p.sum[j], p.sq[j] = 0, 0
	}
	for i := range side {
		var rs, rq float64
		p.sum[(i+1)*iw], p.sq[(i+1)*iw] = 0, 0
		for j := range side {
			v := float64(p.pix[i*side+j])
			rs += v
			rq += v * v
			p.sum[(i+1)*iw+j+1] = p.sum[i*iw+j+1] + rs
			p.sq[(i+1)*iw+j+1] = p.sq[i*iw+j+1] + rq
		}
	}
}

// score is the ZNCC of tpl (side ts) with the window whose top-left is
// (x, y) in the plane.
func (p *plane) score(tpl *prepared, x, y, ts int) float64 {
	side, iw := p.side, p.side+1
	a, b := y*iw+x, y*iw+x+ts
	c, d := (y+ts)*iw+x, (y+ts)*iw+x+ts
	sum := p.sum[d] - p.sum[b] - p.sum[c] + p.sum[a]
	sq := p.sq[d] - p.sq[b] - p.sq[c] + p.sq[a]
	area := float64(ts * ts)
	v := sq - sum*sum/area
	if v < 1e-6 || tpl.norm < 1e-6 {
		return 0
	}
	var d0, d1, d2, d3 float32
	z := tpl.z
	for i := range ts {
		row := p.pix[(y+i)*side+x : (y+i)*side+x+ts]
		t := z[i*ts : i*ts+ts]
		j := 0
		for ; j+3 < len(t); j += 4 {
			d0 += t[j] * row[j]
			d1 += t[j+1] * row[j+1]
			d2 += t[j+2] * row[j+2]
			d3 += t[j+3] * row[j+3]
		}
		for ; j < len(t); j++ {
			d0 += t[j] * row[j]
		}
	}
	return float64(d0+d1+d2+d3) / (tpl.norm * math.Sqrt(v))
}

// peak fits f = a + bx + cy + dx^2 + exy + fy^2 to the 3x3 scores around
// (x, y) by least squares and returns the offset of its maximum, or the
// separable parabolas' when the fit has none within a pixel.
func peak(s []float64, n, x, y int) (float64, float64) {
	v := func(i, j int) float64 { return s[(y+j)*n+x+i] }
	var colM, col0, colP, rowM, row0, rowP float64
	for k := -1; k <= 1; k++ {
		colM += v(-1, k)
		col0 += v(0, k)
		colP += v(1, k)
		rowM += v(k, -1)
		row0 += v(k, 0)
		rowP += v(k, 1)
	}
	b := (colP - colM) / 6
	c := (rowP - rowM) / 6
	d := (colP+colM)/6 - col0/3
	f := (rowP+rowM)/6 - row0/3
	e := (v(1, 1) - v(1, -1) - v(-1, 1) + v(-1, -1)) / 4
	det := 4*d*f - e*e
	if d < 0 && det > 0 {
		ox := (e*c - 2*f*b) / det
		oy := (e*b - 2*d*c) / det
		if math.Abs(ox) <= 1 && math.Abs(oy) <= 1 {
			return ox, oy
		}
	}
	return parabola(v(-1, 0), v(0, 0), v(1, 0)), parabola(v(0, -1), v(0, 0), v(0, 1))
}

func parabola(l, c, r float64) float64 {
	den := l - 2*c + r
	if den >= 0 {
		return 0
	}
	return min(max(0.5*(l-r)/den, -0.5), 0.5)
}

// structure returns the eigenvalues (small, large) of the structure tensor
// (the sum of the gradient's outer products, per pixel) of the (2r+1)^2
// window at (cx, cy). A small one means the window has structure in one
// direction only (an edge, a featureless bar): it cannot be located along
// the other.
func structure(im image, cx, cy float64, r int) (float64, float64) {
	var sxx, sxy, syy float64
	x0, y0 := int(math.Round(cx)), int(math.Round(cy))
	for y := y0 - r; y <= y0+r; y++ {
		for x := x0 - r; x <= x0+r; x++ {
			gx := float64(im.at(x+1, y)-im.at(x-1, y)) / 2
			gy := float64(im.at(x, y+1)-im.at(x, y-1)) / 2
			sxx += gx * gx
			sxy += gx * gy
			syy += gy * gy
		}
	}
	n := float64((2*r + 1) * (2*r + 1))
	sxx, sxy, syy = sxx/n, sxy/n, syy/n
	tr, det := sxx+syy, sxx*syy-sxy*sxy
	d := math.Sqrt(max(tr*tr/4-det, 0))
	return tr/2 - d, tr/2 + d
}

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

// sample is the bilinear interpolation at (x, y).
func (im image) sample(x, y float64) float32 {
	fx, fy := math.Floor(x), math.Floor(y)
	ax, ay := float32(x-fx), float32(y-fy)
	x0, y0 := int(fx), int(fy)
	top := im.at(x0, y0)*(1-ax) + im.at(x0+1, y0)*ax
	bot := im.at(x0, y0+1)*(1-ax) + im.at(x0+1, y0+1)*ax
	return top*(1-ay) + bot*ay
}

// cut samples the (2r+1)^2 patch centered at (cx, cy) into dst.
func cut(im image, cx, cy float64, r int, dst []float32) {
	side := 2*r + 1
	for i := range side {
		for j := range side {
			dst[i*side+j] = im.sample(cx+float64(j-r), cy+float64(i-r))
		}
	}
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
	region  []float32 // the frame around the search window, edge-clamped
	sum, sq []float64 // integral images of region and region^2
	scores  []float64 // ZNCC per candidate, with a ring around the window
}

// match is the best position of a search.
type match struct {
	x, y  float64 // sub-pixel position in the frame
	score float64 // ZNCC at the best whole-pixel position
	edge  bool    // the best whole-pixel position is on the window's edge
}

// search finds tpl (template radius r) in the frame within ±rad whole
// pixels of (cx, cy): ZNCC at each position, the best one refined by a
// 2-D quadratic fit of the 3x3 scores around it.
func (s *searcher) search(im image, tpl *prepared, r, cx, cy, rad int) match {
	if tpl.norm < 1e-6 {
		return match{x: float64(cx), y: float64(cy)}
	}
	ts := 2*r + 1
	cs := 2*rad + 3 // candidates per side: the window plus a ring for the fit
	side := cs + ts - 1
	x0, y0 := cx-rad-1-r, cy-rad-1-r // region origin in the frame
	n := side * side
	if cap(s.region) < n {
		s.region = make([]float32, n)
		s.sum = make([]float64, (side+1)*(side+1))
		s.sq = make([]float64, (side+1)*(side+1))
	}
	s.region, s.sum, s.sq = s.region[:n], s.sum[:(side+1)*(side+1)], s.sq[:(side+1)*(side+1)]
	inside := x0 >= 0 && y0 >= 0 && x0+side <= im.w && y0+side <= im.h
	for i := range side {
		row := s.region[i*side : (i+1)*side]
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
	iw := side + 1
	for j := range iw {
		s.sum[j], s.sq[j] = 0, 0
	}
	for i := range side {
		var rs, rq float64
		s.sum[(i+1)*iw], s.sq[(i+1)*iw] = 0, 0
		for j := range side {
			v := float64(s.region[i*side+j])
			rs += v
			rq += v * v
			s.sum[(i+1)*iw+j+1] = s.sum[i*iw+j+1] + rs
			s.sq[(i+1)*iw+j+1] = s.sq[i*iw+j+1] + rq
		}
	}
	if cap(s.scores) < cs*cs {
		s.scores = make([]float64, cs*cs)
	}
	s.scores = s.scores[:cs*cs]
	area := float64(ts * ts)
	z := tpl.z
	for cy := range cs {
		for cx := range cs {
			// Window top-left (cx, cy) in the region.
			a, b := cy*iw+cx, cy*iw+cx+ts
			c, d := (cy+ts)*iw+cx, (cy+ts)*iw+cx+ts
			sum := s.sum[d] - s.sum[b] - s.sum[c] + s.sum[a]
			sq := s.sq[d] - s.sq[b] - s.sq[c] + s.sq[a]
			v := sq - sum*sum/area
			if v < 1e-6 {
				s.scores[cy*cs+cx] = 0
				continue
			}
			var dot float32
			for i := range ts {
				row := s.region[(cy+i)*side+cx : (cy+i)*side+cx+ts]
				t := z[i*ts : i*ts+ts]
				for j, tv := range t {
					dot += tv * row[j]
				}
			}
			s.scores[cy*cs+cx] = float64(dot) / (tpl.norm * math.Sqrt(v))
		}
	}
	bx, by, best := 1, 1, math.Inf(-1)
	for y := 1; y < cs-1; y++ {
		for x := 1; x < cs-1; x++ {
			if v := s.scores[y*cs+x]; v > best {
				bx, by, best = x, y, v
			}
		}
	}
	dx, dy := peak(s.scores, cs, bx, by)
	return match{
		x:     float64(cx-rad-1+bx) + dx,
		y:     float64(cy-rad-1+by) + dy,
		score: best,
		edge:  bx == 1 || by == 1 || bx == cs-2 || by == cs-2,
	}
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

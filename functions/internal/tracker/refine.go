package tracker

import "math"

// refine improves a match to sub-pixel precision by Lucas-Kanade: Gauss-
// Newton on the translation (and a gain and offset, so brightness changes
// do not bias it) that best maps the template onto the frame around
// (x, y), sampled bilinearly. It returns the refined position and whether
// it converged within a pixel of where it started.
//
// Each iteration samples three grids at one sub-pixel offset (the image,
// and the image half a pixel left and up with one more column, one more
// row, whose neighbours' differences are the central gradients at ±0.5 px),
// so every pixel costs one bilinear sample with fixed weights instead of
// five clamped ones.
func refine(im image, tpl []float32, r int, x, y float64, g *grids) (float64, float64, bool) {
	const iterations = 6
	sx, sy := x, y
	side := 2*r + 1
	g.size(side)
	for range iterations {
		im.grid(x-float64(r), y-float64(r), side, side, g.i)
		im.grid(x-float64(r)-0.5, y-float64(r), side+1, side, g.x)
		im.grid(x-float64(r), y-float64(r)-0.5, side, side+1, g.y)
		var a [4][5]float64 // normal equations [A^T A | -A^T I]
		for v := range side {
			for u := range side {
				i := float64(g.i[v*side+u])
				gx := float64(g.x[v*(side+1)+u+1] - g.x[v*(side+1)+u])
				gy := float64(g.y[(v+1)*side+u] - g.y[v*side+u])
				t := float64(tpl[v*side+u])
				row := [4]float64{gx, gy, -t, -1}
				for p := range 4 {
					for q := p; q < 4; q++ {
						a[p][q] += row[p] * row[q]
					}
					a[p][4] -= row[p] * i
				}
			}
		}
		for p := range 4 {
			for q := range p {
				a[p][q] = a[q][p]
			}
		}
		sol, ok := solve4(a)
		if !ok {
			return sx, sy, false
		}
		x, y = x+sol[0], y+sol[1]
		if math.Hypot(x-sx, y-sy) > 1 {
			return sx, sy, false
		}
		if math.Abs(sol[0]) < 1e-3 && math.Abs(sol[1]) < 1e-3 {
			break
		}
	}
	return x, y, true
}

// grids are refine's reusable sample buffers.
type grids struct{ i, x, y []float32 }

func (g *grids) size(side int) {
	if len(g.i) != side*side {
		g.i = make([]float32, side*side)
		g.x = make([]float32, (side+1)*side)
		g.y = make([]float32, (side+1)*side)
	}
}

// grid samples the image bilinearly at (x0+j, y0+i) for j < cols, i < rows
// into dst (row-major): one sub-pixel offset, so one set of weights; pixels
// outside the frame are the nearest edge pixel's.
func (im image) grid(x0, y0 float64, cols, rows int, dst []float32) {
	fx, fy := math.Floor(x0), math.Floor(y0)
	ax, ay := float32(x0-fx), float32(y0-fy)
	bx, by := 1-ax, 1-ay
	ix, iy := int(fx), int(fy)
	if ix < 0 || iy < 0 || ix+cols >= im.w || iy+rows >= im.h {
		for i := range rows {
			for j := range cols {
				top := im.at(ix+j, iy+i)*bx + im.at(ix+j+1, iy+i)*ax
				bot := im.at(ix+j, iy+i+1)*bx + im.at(ix+j+1, iy+i+1)*ax
				dst[i*cols+j] = top*by + bot*ay
			}
		}
		return
	}
	for i := range rows {
		r0 := im.pix[(iy+i)*im.w+ix : (iy+i)*im.w+ix+cols+1]
		r1 := im.pix[(iy+i+1)*im.w+ix : (iy+i+1)*im.w+ix+cols+1]
		out := dst[i*cols : i*cols+cols]
		for j := range out {
			top := float32(r0[j])*bx + float32(r0[j+1])*ax
			bot := float32(r1[j])*bx + float32(r1[j+1])*ax
			out[j] = top*by + bot*ay
		}
	}
}

// solve4 solves a 4x4 linear system (augmented matrix) by Gaussian
// elimination with partial pivoting.
func solve4(a [4][5]float64) ([4]float64, bool) {
	for c := range 4 {
		p := c
		for r := c + 1; r < 4; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-9 {
			return [4]float64{}, false
		}
		a[c], a[p] = a[p], a[c]
		for r := c + 1; r < 4; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k < 5; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	var x [4]float64
	for r := 3; r >= 0; r-- {
		s := a[r][4]
		for k := r + 1; k < 4; k++ {
			s -= a[r][k] * x[k]
		}
		x[r] = s / a[r][r]
	}
	return x, true
}

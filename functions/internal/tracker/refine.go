package tracker

import "math"

// refine improves a match to sub-pixel precision by Lucas-Kanade: Gauss-
// Newton on the translation (and a gain and offset, so brightness changes
// do not bias it) that best maps the template onto the frame around
// (x, y), sampled bilinearly. It returns the refined position and whether
// it converged within a pixel of where it started.
func refine(im image, tpl []float32, r int, x, y float64) (float64, float64, bool) {
	const iterations = 6
	sx, sy := x, y
	for range iterations {
		var a [4][5]float64 // normal equations [A^T A | -A^T I]
		for v := -r; v <= r; v++ {
			for u := -r; u <= r; u++ {
				px, py := x+float64(u), y+float64(v)
				i := float64(im.sample(px, py))
				gx := float64(im.sample(px+0.5, py) - im.sample(px-0.5, py))
				gy := float64(im.sample(px, py+0.5) - im.sample(px, py-0.5))
				t := float64(tpl[(v+r)*(2*r+1)+u+r])
				row := [4]float64{gx, gy, -t, -1}
				for p := range 4 {
					for q := range 4 {
						a[p][q] += row[p] * row[q]
					}
					a[p][4] -= row[p] * i
				}
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

package kinematics

import "math"

// Sample is one marker's observation on one traced frame, in frame order.
// T is the frame's time in seconds (its real timestamp; index / frame rate
// for a constant-rate movie). A Lost sample has no position; an Uncertain
// one has a position the tracker does not vouch for: both are gaps for every
// derivative, and neither counts as distance travelled.
type Sample struct {
	Frame     int
	T         float64
	X, Y      float64 // normalised frame coordinates
	Lost      bool
	Uncertain bool
}

func (s Sample) known() bool { return !s.Lost && !s.Uncertain }

// Options tune the derivation.
type Options struct {
	// Step is the number of frames between two samples that follow each
	// other (the capture interval). Samples further apart are not
	// neighbours: a frame missing from the trace is a gap like a lost point.
	// 0: every two consecutive samples are neighbours.
	Step int
	// Smooth is the half-width k of a centred moving average applied to
	// positions before differencing: each known position is replaced by the
	// mean of the known positions within k samples on each side in the same
	// run of neighbours, the window shrunk symmetrically at a run's ends so
	// the average stays centred. 0: no smoothing. Reported positions are the
	// smoothed ones when Smooth > 0.
	Smooth int
}

// Row is the derived state of one marker on one sample. Fields after Known
// are meaningful only where their flag says so.
type Row struct {
	Frame int
	T     float64
	// Known: the sample has a position (neither lost nor uncertain).
	Known bool
	X, Y  float64
	// Displacement is the straight-line distance from the first known
	// position; Path the distance travelled up to here, summed over
	// neighbouring known samples (a gap adds nothing: where the marker went
	// while lost is not known).
	Displacement, Path float64
	// HasVelocity: VX, VY and Speed are set (units per second).
	HasVelocity bool
	VX, VY      float64
	Speed       float64
	// HasAcceleration: AX, AY and Acceleration (its magnitude) are set
	// (units per second squared).
	HasAcceleration bool
	AX, AY          float64
	Acceleration    float64
}

// Derive computes the rows of one marker's samples (in frame order) in the
// system s.
//
// Finite differences, on the real sample times (steps h1 = t[i] - t[i-1],
// h2 = t[i+1] - t[i], which may differ):
//   - velocity where both neighbours are known: the three-point central
//     difference of the parabola through the three samples,
//     v = (h1² x[i+1] + (h2² - h1²) x[i] - h2² x[i-1]) / (h1 h2 (h1 + h2)),
//     second-order accurate; (x[i+1] - x[i-1]) / 2h when h1 = h2 = h;
//   - velocity at a run's first or last sample: the one-sided difference
//     with its only known neighbour, (x[i+1] - x[i]) / h2 or
//     (x[i] - x[i-1]) / h1; a sample with no known neighbour has none;
//   - acceleration: the second derivative of the parabola through three
//     neighbouring known samples, 2 (h1 x[i+1] - (h1 + h2) x[i] + h2 x[i-1]) / (h1 h2 (h1 + h2)),
//     centred where possible, else through the sample and the two after it
//     (a run's start) or before it (its end); runs shorter than three
//     samples have none.
//
// Samples whose times do not increase are not neighbours.
func Derive(samples []Sample, s System, o Options) []Row {
	rows := make([]Row, len(samples))
	for i, sm := range samples {
		rows[i] = Row{Frame: sm.Frame, T: sm.T, Known: sm.known()}
		if rows[i].Known {
			rows[i].X, rows[i].Y = s.Position(sm.X, sm.Y)
		}
	}
	// linked[i]: samples i and i+1 are known neighbours.
	linked := make([]bool, len(samples))
	for i := 0; i+1 < len(samples); i++ {
		a, b := samples[i], samples[i+1]
		linked[i] = a.known() && b.known() && b.T > a.T && (o.Step <= 0 || b.Frame-a.Frame <= o.Step)
	}
	if o.Smooth > 0 {
		smooth(rows, linked, o.Smooth)
	}
	first := -1
	var path float64
	for i := range rows {
		r := &rows[i]
		if !r.Known {
			continue
		}
		if first < 0 {
			first = i
		}
		if i > 0 && linked[i-1] {
			path += math.Hypot(r.X-rows[i-1].X, r.Y-rows[i-1].Y)
		}
		r.Path = path
		r.Displacement = math.Hypot(r.X-rows[first].X, r.Y-rows[first].Y)
		prev, next := i > 0 && linked[i-1], linked[i]
		switch {
		case prev && next:
			r.VX = central(rows[i-1].T, r.T, rows[i+1].T, rows[i-1].X, r.X, rows[i+1].X)
			r.VY = central(rows[i-1].T, r.T, rows[i+1].T, rows[i-1].Y, r.Y, rows[i+1].Y)
		case next:
			h := rows[i+1].T - r.T
			r.VX, r.VY = (rows[i+1].X-r.X)/h, (rows[i+1].Y-r.Y)/h
		case prev:
			h := r.T - rows[i-1].T
			r.VX, r.VY = (r.X-rows[i-1].X)/h, (r.Y-rows[i-1].Y)/h
		default:
			continue
		}
		r.HasVelocity, r.Speed = true, math.Hypot(r.VX, r.VY)
		// The three samples of the acceleration's parabola: centred, else
		// forward, else backward.
		j := -1
		switch {
		case prev && next:
			j = i - 1
		case next && i+2 < len(rows) && linked[i+1]:
			j = i
		case prev && i >= 2 && linked[i-2]:
			j = i - 2
		}
		if j >= 0 {
			p, q, u := rows[j], rows[j+1], rows[j+2]
			r.AX = second(p.T, q.T, u.T, p.X, q.X, u.X)
			r.AY = second(p.T, q.T, u.T, p.Y, q.Y, u.Y)
			r.HasAcceleration, r.Acceleration = true, math.Hypot(r.AX, r.AY)
		}
	}
	return rows
}

// central is the derivative at t1 of the parabola through (t0, x0), (t1,
// x1), (t2, x2).
func central(t0, t1, t2, x0, x1, x2 float64) float64 {
	h1, h2 := t1-t0, t2-t1
	return (h1*h1*x2 + (h2*h2-h1*h1)*x1 - h2*h2*x0) / (h1 * h2 * (h1 + h2))
}

// second is the second derivative of the parabola through three points.
func second(t0, t1, t2, x0, x1, x2 float64) float64 {
	h1, h2 := t1-t0, t2-t1
	return 2 * (h1*x2 - (h1+h2)*x1 + h2*x0) / (h1 * h2 * (h1 + h2))
}

// smooth replaces each known position by the centred moving average over
// its run of neighbours (see Options.Smooth).
func smooth(rows []Row, linked []bool, k int) {
	xs, ys := make([]float64, len(rows)), make([]float64, len(rows))
	for i := range rows {
		xs[i], ys[i] = rows[i].X, rows[i].Y
	}
	for i := 0; i < len(rows); {
		if !rows[i].Known {
			i++
			continue
		}
		end := i // the run is [i, end]
		for end < len(rows)-1 && linked[end] {
			end++
		}
		for c := i; c <= end; c++ {
			half := min(k, c-i, end-c)
			var sx, sy float64
			for j := c - half; j <= c+half; j++ {
				sx, sy = sx+xs[j], sy+ys[j]
			}
			n := float64(2*half + 1)
			rows[c].X, rows[c].Y = sx/n, sy/n
		}
		i = end + 1
	}
}

// Summary is one marker's trace in a few numbers.
type Summary struct {
	Samples int
	// Lost and Uncertain count samples without a usable position.
	Lost, Uncertain int
	// Distance is the path length (Row.Path of the last known sample).
	Distance float64
	// MeanSpeed and MaxSpeed are over the samples with a velocity; both 0
	// when none has one.
	MeanSpeed, MaxSpeed float64
	// TimeLost is the time the marker was not known: each lost or uncertain
	// sample counts for its share of the time line, half the time from the
	// sample before it to the sample after it (a whole step at either end).
	TimeLost float64
	// Duration is the time from the first sample to the last.
	Duration float64
}

// Summarize sums up a marker's samples and their rows (from Derive).
func Summarize(samples []Sample, rows []Row) Summary {
	out := Summary{Samples: len(samples)}
	if len(samples) == 0 {
		return out
	}
	out.Duration = samples[len(samples)-1].T - samples[0].T
	var sum float64
	var n int
	for i, r := range rows {
		if r.Known {
			out.Distance = r.Path
		}
		if r.HasVelocity {
			sum += r.Speed
			n++
			out.MaxSpeed = math.Max(out.MaxSpeed, r.Speed)
		}
		sm := samples[i]
		if sm.known() {
			continue
		}
		if sm.Lost {
			out.Lost++
		} else {
			out.Uncertain++
		}
		out.TimeLost += share(samples, i)
	}
	if n > 0 {
		out.MeanSpeed = sum / float64(n)
	}
	return out
}

// share is sample i's part of the time line.
func share(samples []Sample, i int) float64 {
	switch {
	case len(samples) < 2:
		return 0
	case i == 0:
		return samples[1].T - samples[0].T
	case i == len(samples)-1:
		return samples[i].T - samples[i-1].T
	}
	return (samples[i+1].T - samples[i-1].T) / 2
}

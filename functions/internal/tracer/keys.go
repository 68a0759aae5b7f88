package tracer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"

	"github.com/movietrace/tracinglocks/domain"
)

// planKeys is where a trace (re)starts each marker: its placement and the
// user's corrections (domain.MarkerKeys), each on the first traced frame at
// or after its own frame (a key before the trim starts on the trim's first
// frame; one at or after the trim's end is never reached). A marker has no
// point before its first key frame: there is no backward tracking.
type planKeys struct {
	// at lists the keys of each traced frame, in the order of the markers.
	at map[int][]planKey
	// start is each marker's first key frame (math.MaxInt: never).
	start []int
	// order is the markers by start frame, then position: the order in
	// which the tracker adds them, so their index in the tracker.
	order []int
	all   []planKey
}

type planKey struct {
	marker int    // index in Settings.Markers
	id     string // its ID
	frame  int    // the traced frame it applies on
	x, y   float64
}

func keysOf(s domain.Settings, w, h int) planKeys {
	step := max(s.CaptureInterval, 1)
	onGrid := func(f int) int {
		f = max(f, s.Trim.Start)
		if off := (f - s.Trim.Start) % step; off != 0 {
			f += step - off
		}
		return f
	}
	ks := planKeys{at: map[int][]planKey{}, start: make([]int, len(s.Markers))}
	for i, mk := range s.Markers {
		ks.start[i] = math.MaxInt
		for _, k := range domain.MarkerKeys(s, mk) {
			f := onGrid(k.Frame)
			if f >= s.Trim.End {
				continue
			}
			pk := planKey{marker: i, id: mk.ID, frame: f, x: toPixel(k.X, w), y: toPixel(k.Y, h)}
			if n := len(ks.at[f]); n > 0 && ks.at[f][n-1].marker == i {
				ks.at[f][n-1] = pk // two keys on one traced frame: the later one
				ks.all[len(ks.all)-1] = pk
				continue
			}
			ks.at[f] = append(ks.at[f], pk)
			ks.all = append(ks.all, pk)
			ks.start[i] = min(ks.start[i], f)
		}
	}
	ks.order = make([]int, len(s.Markers))
	for i := range ks.order {
		ks.order[i] = i
	}
	slices.SortStableFunc(ks.order, func(a, b int) int { return compareInt(ks.start[a], ks.start[b]) })
	return ks
}

func compareInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// activeAt is the number of markers started at or before frame f.
func (ks planKeys) activeAt(f int) int {
	n := 0
	for _, s := range ks.start {
		if s <= f {
			n++
		}
	}
	return n
}

// slots is each marker's index among the tracker's markers once every
// frame up to f was tracked (-1: not started yet).
func (ks planKeys) slots(f int) []int {
	out := make([]int, len(ks.start))
	n := 0
	for _, i := range ks.order {
		out[i] = -1
		if ks.start[i] <= f {
			out[i] = n
			n++
		}
	}
	return out
}

// digest names the key frames up to frame f: a tracker state saved after
// frame f depends on them and on no later one, so a correction keeps every
// state saved before its frame.
func (ks planKeys) digest(f int) string {
	h := sha256.New()
	for _, k := range ks.all {
		if k.frame <= f {
			fmt.Fprintf(h, "%d|%s|%d|%x|%x|", k.marker, k.id, k.frame, math.Float64bits(k.x), math.Float64bits(k.y))
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

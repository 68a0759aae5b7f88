package tracker

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// State format: "MTRK", the format version (stateVersion), then little-endian fields (see
// MarshalBinary). Floats are stored bit-exact, so a restored tracker
// continues exactly as the original would have.
const (
	stateMagic   = "MTRK"
	stateVersion = 4
	maxMarkers   = 1024
	maxSide      = 16384
)

// ErrBadState is returned by Restore for bytes that are not a tracker state.
var ErrBadState = errors.New("tracker: not a valid tracker state")

// MarshalBinary returns the tracker's whole state.
func (t *Tracker) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(stateMagic)
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	w(uint16(stateVersion))
	p := t.p
	w([4]int32{int32(p.TemplateRadius), int32(p.MaxTemplateRadius), int32(p.SearchRadius), int32(p.LostSearchRadius)})
	w([7]float64{p.MinConfidence, p.ReacquireConfidence, p.EvolveConfidence, p.Evolve, p.Tether, p.KeyConfidence, p.FBError})
	w([2]int32{int32(t.w), int32(t.h)})
	w(int64(t.steps))
	w(uint16(len(t.markers)))
	for _, m := range t.markers {
		w([7]float64{m.x, m.y, m.vx, m.vy, m.conf, m.kx, m.ky})
		w([2]int32{int32(m.lostFor), int32(m.r)})
		w(m.key)
		w(m.cur)
		w([2]int32{int32(m.prevX), int32(m.prevY)})
		w(m.prev)
		w(m.abrupt)
	}
	return b.Bytes(), nil
}

// Restore rebuilds a tracker from MarshalBinary's bytes. Anything else is
// ErrBadState.
func Restore(data []byte) (*Tracker, error) {
	if len(data) < len(stateMagic)+2 || string(data[:len(stateMagic)]) != stateMagic {
		return nil, fmt.Errorf("%w: no header", ErrBadState)
	}
	rdr := bytes.NewReader(data[len(stateMagic):])
	var err error
	rd := func(v any) {
		if err == nil {
			err = binary.Read(rdr, binary.LittleEndian, v)
		}
	}
	var version uint16
	rd(&version)
	if err != nil || version != stateVersion {
		return nil, fmt.Errorf("%w: version %d", ErrBadState, version)
	}
	var radii [4]int32
	var rates [7]float64
	var size [2]int32
	var steps int64
	var n uint16
	rd(&radii)
	rd(&rates)
	rd(&size)
	rd(&steps)
	rd(&n)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadState, err)
	}
	p := Params{TemplateRadius: int(radii[0]), MaxTemplateRadius: int(radii[1]), SearchRadius: int(radii[2]), LostSearchRadius: int(radii[3]),
		MinConfidence: rates[0], ReacquireConfidence: rates[1], EvolveConfidence: rates[2], Evolve: rates[3], Tether: rates[4],
		KeyConfidence: rates[5], FBError: rates[6]}
	if q, perr := p.withDefaults(); perr != nil || q != p {
		return nil, fmt.Errorf("%w: parameters %+v", ErrBadState, p)
	}
	w, h := int(size[0]), int(size[1])
	if w <= 0 || h <= 0 || w > maxSide || h > maxSide || steps < 0 || n > maxMarkers {
		return nil, fmt.Errorf("%w: %dx%d, %d steps, %d markers", ErrBadState, w, h, steps, n)
	}
	t := &Tracker{p: p, w: w, h: h, steps: int(steps), markers: make([]marker, n), scratch: make([]scratch, n)}
	for i := range t.markers {
		m := &t.markers[i]
		var f [7]float64
		var ints [2]int32
		rd(&f)
		rd(&ints)
		lostFor, radius := ints[0], int(ints[1])
		if err != nil || radius < p.TemplateRadius || radius > p.MaxTemplateRadius {
			return nil, fmt.Errorf("%w: marker %d template radius %d (%v)", ErrBadState, i, radius, err)
		}
		ts := 2*radius + 1
		ps := 2*(radius+fbReach) + 1
		if rdr.Len() < 2*4*ts*ts+8+ps*ps+1 {
			return nil, fmt.Errorf("%w: marker %d is cut short", ErrBadState, i)
		}
		m.r = radius
		m.key, m.cur = make([]float32, ts*ts), make([]float32, ts*ts)
		rd(m.key)
		rd(m.cur)
		var origin [2]int32
		rd(&origin)
		m.prevX, m.prevY = int(origin[0]), int(origin[1])
		m.prev = make([]byte, ps*ps)
		rd(m.prev)
		var abrupt uint8
		rd(&abrupt)
		if err != nil || abrupt > 1 {
			return nil, fmt.Errorf("%w: marker %d: %v", ErrBadState, i, err)
		}
		m.abrupt = abrupt == 1
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadState, err)
		}
		m.x, m.y, m.vx, m.vy, m.conf, m.kx, m.ky, m.lostFor = f[0], f[1], f[2], f[3], f[4], f[5], f[6], int(lostFor)
		for _, v := range f {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: marker %d is not finite", ErrBadState, i)
			}
		}
		if m.x < 0 || m.y < 0 || m.x > float64(w-1) || m.y > float64(h-1) || m.lostFor < 0 ||
			m.kx < 0 || m.ky < 0 || m.kx > float64(w-1) || m.ky > float64(h-1) ||
			math.Abs(m.vx) > maxSide || math.Abs(m.vy) > maxSide || m.conf < 0 || m.conf > 1 {
			return nil, fmt.Errorf("%w: marker %d at %v,%v", ErrBadState, i, m.x, m.y)
		}
		for _, tpl := range [][]float32{m.key, m.cur} {
			for _, v := range tpl {
				if !(v >= 0 && v <= 255) {
					return nil, fmt.Errorf("%w: marker %d template value %v", ErrBadState, i, v)
				}
			}
		}
	}
	if rdr.Len() != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last marker", ErrBadState, rdr.Len())
	}
	return t, nil
}

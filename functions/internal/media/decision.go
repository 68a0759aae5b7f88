package media

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/movietrace/tracinglocks/functions/internal/video"
)

// Decision is what a movie's ingest decides once, in its first range, from
// reading the whole upload: the probe (frame count, rate, size, rotation),
// the seek timing and the rendition's plan (for a remux, every packet's
// size and checksum). It is recorded beside the chunks (DecisionKey, a
// few bytes per frame: 8 per packet of a remux, about 0.9 MB for an hour
// at 30 fps) so that later ranges read it instead of the upload, two or
// three times over, before they prepare anything. It depends on the
// upload alone, so a range that decides again (the first redelivered, or
// the record missing) writes the same bytes under the same key.
type Decision struct {
	Info   video.Info
	Timing video.Timing
	Plan   Plan
}

// decisionVersion changes when the record's meaning does; a record of
// another version is decided again.
const decisionVersion = 1

type decisionJSON struct {
	Version     int          `json:"version"`
	Info        video.Info   `json:"info"`
	Timing      video.Timing `json:"timing"`
	ChunkFrames int          `json:"chunkFrames"`
	Reason      string       `json:"reason,omitempty"`
	Copy        *copyJSON    `json:"copy,omitempty"`
}

type copyJSON struct {
	GOP    int     `json:"gop"`
	Width  int     `json:"width"`
	Height int     `json:"height"`
	Frames int     `json:"frames"`
	Start  float64 `json:"start"`
	Step   float64 `json:"step"`
	// Sums: 8 bytes per packet, its size and Adler-32 (big-endian).
	Sums []byte `json:"sums"`
}

// EncodeDecision is the record of d (JSON).
func EncodeDecision(d Decision) ([]byte, error) {
	r := decisionJSON{Version: decisionVersion, Info: d.Info, Timing: d.Timing, ChunkFrames: d.Plan.ChunkFrames, Reason: d.Plan.Reason}
	if p := d.Plan.Copy; p != nil {
		c := &copyJSON{GOP: p.GOP, Width: p.Width, Height: p.Height, Frames: p.Frames, Start: p.Start, Step: p.Step,
			Sums: make([]byte, 0, 8*len(p.sums))}
		for _, s := range p.sums {
			if s.size < 0 || s.size > math.MaxUint32 {
				return nil, fmt.Errorf("media: a packet of %d bytes", s.size)
			}
			c.Sums = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(c.Sums, uint32(s.size)), s.adler)
		}
		r.Copy = c
	}
	return json.Marshal(r)
}

// ErrDecisionVersion: the record was written by another version of the
// ingest; the range decides again.
var ErrDecisionVersion = errors.New("media: the recorded decision is of another version")

// ParseDecision reads a record EncodeDecision wrote, checking that it is
// one a range can prepare from (it is read back from the bucket).
func ParseDecision(data []byte) (Decision, error) {
	var r decisionJSON
	if err := json.Unmarshal(data, &r); err != nil {
		return Decision{}, fmt.Errorf("media: decision record: %w", err)
	}
	if r.Version != decisionVersion {
		return Decision{}, fmt.Errorf("%w (%d)", ErrDecisionVersion, r.Version)
	}
	bad := func(what string) (Decision, error) { return Decision{}, fmt.Errorf("media: decision record: %s", what) }
	in := r.Info
	switch {
	case in.FrameCount < 1 || in.FrameCount > video.MaxFrames:
		return bad("frame count")
	case !(in.FrameRate >= video.MinFrameRate && in.FrameRate <= video.MaxFrameRate):
		return bad("frame rate")
	case in.Width < 1 || in.Height < 1 || in.Width > video.MaxDimension || in.Height > video.MaxDimension:
		return bad("frame size")
	case in.Rotation < 0 || in.Rotation >= 360 || in.Duration < 0:
		return bad("rotation or duration")
	case in.SampleAspect[0] < 0 || in.SampleAspect[1] < 0:
		return bad("sample aspect")
	case !(r.Timing.Rate >= 0) || math.IsInf(r.Timing.Rate, 0) || math.IsNaN(r.Timing.Offset) || math.IsInf(r.Timing.Offset, 0):
		return bad("timing")
	case r.ChunkFrames < 1 || r.ChunkFrames > 1000:
		return bad("chunk size")
	}
	d := Decision{Info: in, Timing: r.Timing, Plan: Plan{ChunkFrames: r.ChunkFrames, Reason: r.Reason}}
	if c := r.Copy; c != nil {
		switch {
		case c.GOP < 1 || c.GOP > MaxCopyGOP || c.GOP != r.ChunkFrames:
			return bad("remux GOP")
		case c.Frames != in.FrameCount || len(c.Sums) != 8*c.Frames:
			return bad("remux packets")
		case c.Width < 2 || c.Height < 2 || c.Width > video.MaxDimension || c.Height > video.MaxDimension:
			return bad("remux frame size")
		case math.IsNaN(c.Start) || math.IsInf(c.Start, 0) || !(c.Step > 0) || math.IsInf(c.Step, 0):
			return bad("remux timestamps")
		}
		p := &CopyPlan{GOP: c.GOP, Width: c.Width, Height: c.Height, Frames: c.Frames, Start: c.Start, Step: c.Step,
			sums: make([]packetSum, c.Frames)}
		for i := range p.sums {
			p.sums[i] = packetSum{size: int(binary.BigEndian.Uint32(c.Sums[8*i:])), adler: binary.BigEndian.Uint32(c.Sums[8*i+4:]), ok: true}
		}
		d.Plan.Copy = p
	}
	return d, nil
}

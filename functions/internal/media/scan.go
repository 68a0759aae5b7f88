package media

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// The remux ("copy") rendition: when an upload is already what the chunks
// would be (H.264 a browser decodes, upright, square pixels, constant
// rate, a keyframe exactly every G frames with closed GOPs), its own
// packets are cut into chunks of G frames at its keyframes instead of
// being decoded and encoded again. Whether it is, is read from one demux
// of the file (scan: the stream's fields and every packet's timestamps,
// flags and CRC, no decoding), and each chunk is then proven before it is
// stored (verifyChunk): it holds exactly the upload's packets of its
// frames, byte for byte, and decodes to exactly its frame count without a
// decoder error. A chunk that cannot be proven is encoded instead (package
// comment of prepare.go: Prepare with no Copy).

// MaxCopyGOP is the longest keyframe interval remuxed: a chunk of at most
// 120 frames (4 s at 30 fps) keeps a frame reachable by decoding at most
// 120 frames.
const MaxCopyGOP = 120

// scanPacket is one packet of the upload's video stream, in decode order.
type scanPacket struct {
	pts  int64
	key  bool
	drop bool // the demuxer marked it discarded (an edit list cuts it)
	sum  packetSum
}

// packetSum identifies a packet's data: its size and Adler-32 (as
// ffprobe's -show_data_hash adler32 prints it: zlib's, which starts from
// 1). ok is false when the scan had none.
type packetSum struct {
	size  int
	adler uint32
	ok    bool
}

// scanStream is the stream fields the plan checks.
type scanStream struct {
	codec, profile, pixFmt, fieldOrder, sar, format string
	width, height                                   int
	tbNum, tbDen                                    int64
	// start is the file's start time in seconds (ffmpeg's -ss counts from it).
	start float64
	// keySizes are the decoded keyframes' sizes, in the scan's order.
	keySizes [][2]int
}

// scanOutput is the part of the probe's JSON (video.ProbeMore with
// scanArgs) that a remux plan reads: the streams' fields, the format's,
// and the packets and decoded keyframes of every video stream, in the
// order ffprobe read and decoded them. ffprobe prints sizes as strings
// and leaves out what it does not know (a packet without a pts).
type scanOutput struct {
	Entries []struct {
		Type        string `json:"type"`
		StreamIndex int    `json:"stream_index"`
		PTS         *int64 `json:"pts"`
		Flags       string `json:"flags"`
		Size        string `json:"size"`
		DataHash    string `json:"data_hash"`
		Width       int    `json:"width"`
		Height      int    `json:"height"`
	} `json:"packets_and_frames"`
	Streams []struct {
		Index      int    `json:"index"`
		CodecName  string `json:"codec_name"`
		Profile    string `json:"profile"`
		PixFmt     string `json:"pix_fmt"`
		FieldOrder string `json:"field_order"`
		SAR        string `json:"sample_aspect_ratio"`
		TimeBase   string `json:"time_base"`
		Width      int    `json:"width"`
		Height     int    `json:"height"`
	} `json:"streams"`
	Format struct {
		FormatName string `json:"format_name"`
		StartTime  string `json:"start_time"`
	} `json:"format"`
}

// parseScan reads the probe's JSON for stream index stream: its fields,
// the format's name and start, its packets (pts, flags, size, data_hash)
// and its decoded keyframes' sizes. Entries of other streams (a cover
// picture) are skipped; a packet without a pts or flags, a frame without
// a size, a missing stream or time base, a stream that is not the first
// video stream, or anything that is not JSON of this shape is an error:
// the input is ffprobe's, anything else is garbage.
func parseScan(data []byte, stream int) (scanStream, []scanPacket, error) {
	var out scanOutput
	var st scanStream
	if err := json.Unmarshal(data, &out); err != nil {
		return st, nil, fmt.Errorf("media: scan output: %w", err)
	}
	found := false
	for i, s := range out.Streams {
		if s.Index != stream {
			continue
		}
		if i != 0 {
			// The remux and the encoding read the first video stream
			// (-map 0:v:0); the probe described another (the first is a
			// cover picture).
			return st, nil, fmt.Errorf("media: the video stream %d is not the file's first", stream)
		}
		found = true
		st = scanStream{codec: s.CodecName, profile: s.Profile, pixFmt: s.PixFmt, fieldOrder: s.FieldOrder, sar: s.SAR,
			width: s.Width, height: s.Height}
		num, den, ok := strings.Cut(s.TimeBase, "/")
		if !ok {
			return st, nil, fmt.Errorf("media: scan time base %.40q", s.TimeBase)
		}
		var err1, err2 error
		st.tbNum, err1 = strconv.ParseInt(num, 10, 64)
		st.tbDen, err2 = strconv.ParseInt(den, 10, 64)
		if err1 != nil || err2 != nil || st.tbNum <= 0 || st.tbDen <= 0 {
			return st, nil, fmt.Errorf("media: scan time base %.40q", s.TimeBase)
		}
		break
	}
	if !found {
		return st, nil, fmt.Errorf("media: the scan has no stream %d", stream)
	}
	st.format = out.Format.FormatName
	if v, err := strconv.ParseFloat(out.Format.StartTime, 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
		st.start = v
	}
	var pkts []scanPacket
	for _, e := range out.Entries {
		if e.StreamIndex != stream {
			continue
		}
		switch e.Type {
		case "packet":
			if e.PTS == nil {
				return st, nil, fmt.Errorf("media: packet %d has no pts", len(pkts))
			}
			if len(e.Flags) < 2 {
				return st, nil, fmt.Errorf("media: packet %d flags %.20q", len(pkts), e.Flags)
			}
			sum := packetSum{}
			if size, err := strconv.Atoi(e.Size); err == nil && size >= 0 {
				if hex, ok := strings.CutPrefix(e.DataHash, "adler32:"); ok && len(hex) == 8 {
					if v, err := strconv.ParseUint(hex, 16, 32); err == nil {
						sum = packetSum{size: size, adler: uint32(v), ok: true}
					}
				}
			}
			pkts = append(pkts, scanPacket{pts: *e.PTS, key: e.Flags[0] == 'K', drop: strings.Contains(e.Flags, "D"), sum: sum})
		case "frame":
			if e.Width <= 0 || e.Height <= 0 {
				return st, nil, fmt.Errorf("media: keyframe size %dx%d", e.Width, e.Height)
			}
			st.keySizes = append(st.keySizes, [2]int{e.Width, e.Height})
		default:
			return st, nil, fmt.Errorf("media: scan entry %.20q", e.Type)
		}
	}
	return st, pkts, nil
}

// sizeChange says why a remux plan cannot hold frames of these sizes (its
// keyframes' as decoded), or "" when every one is the plan's size.
func sizeChange(p *CopyPlan, sizes [][2]int) string {
	if len(sizes) == 0 {
		return "no keyframe was decoded"
	}
	for _, sz := range sizes {
		if sz != [2]int{p.Width, p.Height} {
			return fmt.Sprintf("the frame size changes from %dx%d to %dx%d", p.Width, p.Height, sz[0], sz[1])
		}
	}
	return ""
}

// copyProfiles are the H.264 profiles Chromium decodes (8-bit 4:2:0).
var copyProfiles = map[string]bool{"Constrained Baseline": true, "Baseline": true, "Main": true, "High": true}

// CopyPlan is a remux of the upload at its keyframes (see scan.go).
type CopyPlan struct {
	// GOP is the keyframe interval, the chunk size.
	GOP int
	// Width and Height are the frame size (the chunks').
	Width, Height int
	// Frames is the upload's frame (packet) count.
	Frames int
	// Start is frame 0's time in seconds after the file's start, Step a
	// frame's duration: frame n is shown at Start + n*Step (a range's seek).
	Start, Step float64
	// sums identify the packets in decode order: chunk k holds
	// sums[k*GOP : (k+1)*GOP].
	sums []packetSum
}

// planCopy decides from a scan whether the upload can be remuxed; when it
// cannot, reason says why (a sentence for the log and the docs).
func planCopy(st scanStream, pkts []scanPacket, rotation int, sar [2]int) (plan *CopyPlan, reason string) {
	switch {
	case st.codec != "h264":
		return nil, "the codec is " + st.codec + ", not h264"
	case !copyProfiles[st.profile]:
		return nil, "the H.264 profile " + st.profile + " is not one a browser decodes"
	case st.pixFmt != "yuv420p":
		return nil, "the pixel format is " + st.pixFmt + ", not yuv420p"
	case st.fieldOrder != "progressive" && st.fieldOrder != "unknown" && st.fieldOrder != "":
		return nil, "the video is interlaced (" + st.fieldOrder + ")"
	case !strings.Contains(st.format, "mp4") && !strings.Contains(st.format, "matroska"):
		return nil, "the container " + st.format + " is not MP4, MOV or Matroska"
	case rotation != 0:
		return nil, "the video is displayed rotated"
	case sar != [2]int{1, 1}:
		return nil, "the pixels are not square"
	case st.width < 2 || st.height < 2 || st.width%2 != 0 || st.height%2 != 0:
		return nil, fmt.Sprintf("the frame size %dx%d is not even", st.width, st.height)
	case len(pkts) == 0:
		return nil, "the stream has no packets"
	case !pkts[0].key:
		return nil, "the first packet is not a keyframe"
	}
	g := len(pkts)
	for i, p := range pkts {
		if p.drop {
			return nil, fmt.Sprintf("packet %d is discarded by an edit list", i)
		}
		if !p.sum.ok {
			return nil, fmt.Sprintf("packet %d has no checksum", i)
		}
		if p.key && i > 0 {
			g = i
			break
		}
	}
	if g > MaxCopyGOP {
		return nil, fmt.Sprintf("the keyframe interval %d is longer than %d frames", g, MaxCopyGOP)
	}
	// Display order: the rank of each packet's pts.
	order := make([]int, len(pkts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return pkts[order[a]].pts < pkts[order[b]].pts })
	rank := make([]int, len(pkts))
	for r, i := range order {
		rank[i] = r
	}
	for i, p := range pkts {
		if p.key != (i%g == 0) {
			return nil, fmt.Sprintf("the keyframes are not every %d frames (packet %d)", g, i)
		}
		if rank[i]/g != i/g || (p.key && rank[i] != i) {
			return nil, fmt.Sprintf("the GOP of packet %d is not closed in display order", i)
		}
	}
	// A constant rate: every display step the same, within one tick.
	step := int64(0)
	if len(pkts) > 1 {
		step = pkts[order[1]].pts - pkts[order[0]].pts
		if step <= 0 {
			return nil, "two frames have one timestamp"
		}
		for r := 2; r < len(order); r++ {
			if d := pkts[order[r]].pts - pkts[order[r-1]].pts; d < step-1 || d > step+1 {
				return nil, fmt.Sprintf("the frame rate is not constant (frame %d)", r)
			}
		}
		// Average the step over the stream (rounded timestamps).
		stepF := float64(pkts[order[len(order)-1]].pts-pkts[order[0]].pts) / float64(len(order)-1)
		tb := float64(st.tbNum) / float64(st.tbDen)
		plan = &CopyPlan{GOP: g, Width: st.width, Height: st.height, Frames: len(pkts), Start: float64(pkts[order[0]].pts)*tb - st.start, Step: stepF * tb}
	} else {
		plan = &CopyPlan{GOP: g, Width: st.width, Height: st.height, Frames: 1, Start: float64(pkts[0].pts)*float64(st.tbNum)/float64(st.tbDen) - st.start, Step: 1}
	}
	if math.IsNaN(plan.Start) || math.IsInf(plan.Start, 0) || !(plan.Step > 0) || math.IsInf(plan.Step, 0) {
		return nil, "the timestamps are out of range"
	}
	plan.sums = make([]packetSum, len(pkts))
	for i, p := range pkts {
		plan.sums[i] = p.sum
	}
	return plan, ""
}

// chunkSums are the packets chunk k must hold.
func (p *CopyPlan) chunkSums(k int) []packetSum {
	lo := min(k*p.GOP, len(p.sums))
	return p.sums[lo:min(lo+p.GOP, len(p.sums))]
}

// parseFrameCRC reads ffmpeg's framecrc output: one line per packet
// ("stream, dts, pts, duration, size, 0xADLER[, side data]"), comment
// lines starting with "#". The Adler-32 is computed from 0, not zlib's 1:
// it is converted to zlib's (ffprobe's) from the size.
func parseFrameCRC(data string) ([]packetSum, error) {
	var out []packetSum
	for line := range strings.Lines(data) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 6 {
			return nil, fmt.Errorf("media: framecrc line %.60q", line)
		}
		size, err := strconv.Atoi(strings.TrimSpace(f[4]))
		hex, ok := strings.CutPrefix(strings.TrimSpace(f[5]), "0x")
		if err != nil || size < 0 || !ok || len(hex) != 8 {
			return nil, fmt.Errorf("media: framecrc line %.60q", line)
		}
		v, err := strconv.ParseUint(hex, 16, 32)
		if err != nil {
			return nil, fmt.Errorf("media: framecrc line %.60q", line)
		}
		const mod = 65521
		a := (uint64(v&0xffff) + 1) % mod
		b := (uint64(v>>16) + uint64(size)) % mod
		out = append(out, packetSum{size: size, adler: uint32(b<<16 | a), ok: true})
	}
	return out, nil
}

package media

import (
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

// parseScan reads ffprobe's compact output (-of compact=p=1:nk=0) of the
// video stream's fields, the format's name, its packets (pts, flags, size,
// data_hash) and its decoded keyframes (frame: width, height; their side
// data lines skipped). Lines other than stream, format, program (a
// program's own listing of its streams, skipped), packet, frame and
// side_data are errors: the input is ffprobe's, anything else is garbage.
func parseScan(data string) (scanStream, []scanPacket, error) {
	var st scanStream
	var pkts []scanPacket
	streams := 0
	for _, line := range compactLines(data) {
		section, rest, _ := strings.Cut(line, "|")
		fields := compactFields(rest)
		switch section {
		case "stream":
			streams++
			st.codec, st.profile, st.pixFmt = fields["codec_name"], fields["profile"], fields["pix_fmt"]
			st.fieldOrder, st.sar = fields["field_order"], fields["sample_aspect_ratio"]
			st.width, _ = strconv.Atoi(fields["width"])
			st.height, _ = strconv.Atoi(fields["height"])
			num, den, ok := strings.Cut(fields["time_base"], "/")
			if !ok {
				return st, nil, fmt.Errorf("media: scan time base %.40q", fields["time_base"])
			}
			var err1, err2 error
			st.tbNum, err1 = strconv.ParseInt(num, 10, 64)
			st.tbDen, err2 = strconv.ParseInt(den, 10, 64)
			if err1 != nil || err2 != nil || st.tbNum <= 0 || st.tbDen <= 0 {
				return st, nil, fmt.Errorf("media: scan time base %.40q", fields["time_base"])
			}
		case "program", "side_data":
			// A program's listing repeats its streams (MPEG-TS); a frame's
			// side data may come on a line of its own.
		case "frame":
			fw, err1 := strconv.Atoi(fields["width"])
			fh, err2 := strconv.Atoi(fields["height"])
			if err1 != nil || err2 != nil || fw <= 0 || fh <= 0 {
				return st, nil, fmt.Errorf("media: keyframe size %.20qx%.20q", fields["width"], fields["height"])
			}
			st.keySizes = append(st.keySizes, [2]int{fw, fh})
		case "format":
			st.format = fields["format_name"]
			if v, err := strconv.ParseFloat(fields["start_time"], 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
				st.start = v
			}
		case "packet":
			pts, err := strconv.ParseInt(fields["pts"], 10, 64)
			if err != nil {
				return st, nil, fmt.Errorf("media: packet %d has no pts (%.20q)", len(pkts), fields["pts"])
			}
			flags := fields["flags"]
			if len(flags) < 2 {
				return st, nil, fmt.Errorf("media: packet %d flags %.20q", len(pkts), flags)
			}
			sum := packetSum{}
			if size, err := strconv.Atoi(fields["size"]); err == nil && size >= 0 {
				if hex, ok := strings.CutPrefix(fields["data_hash"], "adler32:"); ok && len(hex) == 8 {
					if v, err := strconv.ParseUint(hex, 16, 32); err == nil {
						sum = packetSum{size: size, adler: uint32(v), ok: true}
					}
				}
			}
			pkts = append(pkts, scanPacket{pts: pts, key: flags[0] == 'K', drop: strings.Contains(flags, "D"), sum: sum})
		default:
			return st, nil, fmt.Errorf("media: scan line %.40q", line)
		}
	}
	if streams != 1 {
		return st, nil, fmt.Errorf("media: scan has %d video streams", streams)
	}
	return st, pkts, nil
}

// compactLines splits ffprobe's compact output into its sections' lines:
// a nested section (a packet's side data) continues its parent's line on
// lines that start with "|".
func compactLines(data string) []string {
	var out []string
	for line := range strings.Lines(data) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
		case strings.HasPrefix(line, "|") && len(out) > 0:
			out[len(out)-1] += line
		default:
			out = append(out, line)
		}
	}
	return out
}

// compactFields reads one line of ffprobe's compact output (after its
// section name): key=value fields separated by "|". A nested section's
// name (side_data) has no "=" and is skipped, and a key seen twice keeps
// its first value (the stream's own, not a nested section's).
func compactFields(rest string) map[string]string {
	fields := map[string]string{}
	for kv := range strings.SplitSeq(rest, "|") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			if _, seen := fields[k]; !seen {
				fields[k] = v
			}
		}
	}
	return fields
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

package video

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Any codec the bundled ffmpeg decodes is accepted: every reader reads the
// movie's rendition (H.264 chunks, see package media), never the upload, so
// the upload's codec only has to be decodable once, by the ingest. A codec
// ffprobe cannot name, or that the ingest's decoder refuses, is an
// *UnsupportedCodecError.

// UnsupportedCodecError names a codec that cannot be decoded. errors.Is(err,
// ErrUnsupportedCodec) holds for it.
type UnsupportedCodecError struct{ Codec string }

func (e *UnsupportedCodecError) Error() string {
	return fmt.Sprintf("video: codec %q is not supported", e.Codec)
}

func (e *UnsupportedCodecError) Is(target error) bool { return target == ErrUnsupportedCodec }

// Probe describes src's first video stream (attached cover pictures are
// skipped) by running ffprobe with JSON output. It reads the whole stream's
// packets (no decoding) to count the frames, so a file cut short is reported
// as ErrTruncated even when its index promises more.
func Probe(ctx context.Context, src string) (Info, error) {
	p, err := probe(ctx, src)
	return p.Info, err
}

// Probed is what one ffprobe of a movie said: Probe's Info, ProbeTiming's
// Timing, the described stream's index in the file, and, for a caller
// that asked the same run for more (ProbeMore), ffprobe's JSON and what
// it wrote on its stderr (a decoder's messages in a run that completed).
type Probed struct {
	Info   Info
	Timing Timing
	Stream int
	Output []byte
	Stderr string
}

// ProbeMore is Probe and ProbeTiming from one ffprobe (the probe's output
// holds every field ProbeTiming reads: the streams' rates, start times and
// dispositions, the format's name and start time), with extra arguments
// for the same run (before the input: codec options, more -show_entries),
// so a caller that needs more of the file (the ingest's decision: every
// packet and the decoded keyframes, media.Decide) reads it once, in one
// process (a start costs 0.05-0.09 CPU-s on the 2-core machine). Its Info
// and Timing are Probe's and ProbeTiming's whatever the extra arguments
// (TestProbeMore), the Timing zero ("do not seek") where ProbeTiming would
// have failed.
func ProbeMore(ctx context.Context, src string, extra ...string) (Probed, error) {
	p, err := probe(ctx, src, extra...)
	if err != nil {
		return Probed{}, err
	}
	if p.Timing, err = parseTiming(p.Output); err != nil {
		p.Timing = Timing{}
	}
	return p, nil
}

// probe is Probe, with ffprobe's output and extra arguments.
func probe(ctx context.Context, src string, extra ...string) (Probed, error) {
	in, err := input(src)
	if err != nil {
		return Probed{}, err
	}
	bin, err := ffprobePath()
	if err != nil {
		return Probed{}, err
	}
	if !isURL(src) {
		st, err := os.Stat(src)
		if err != nil {
			return Probed{}, fmt.Errorf("video: probe: %w", err)
		}
		if st.Size() == 0 {
			return Probed{}, ErrEmpty
		}
	}
	args := append(append([]string{"-v", "error", "-print_format", "json", "-show_format", "-show_streams",
		"-count_packets", "-select_streams", "v"}, extra...), in...)
	cmd := exec.CommandContext(ctx, bin, args...)
	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	out, runErr := cmd.Output()
	if ctx.Err() != nil {
		return Probed{}, ctx.Err()
	}
	msg := stderr.String()
	if runErr != nil {
		kind := classify(msg)
		if errors.Is(kind, ErrNotVideo) && strings.Contains(msg, "moov atom not found") && looksLikeMP4(ctx, src) {
			kind = ErrTruncated // an MP4 whose index (at its end) never arrived
		}
		if kind == nil {
			return Probed{}, fmt.Errorf("video: ffprobe: %w: %s", runErr, msg)
		}
		return Probed{}, fmt.Errorf("%w (ffprobe: %s)", kind, msg)
	}
	info, stream, err := parseProbeStream(out)
	if err != nil {
		return Probed{}, err
	}
	if strings.Contains(msg, "partial file") {
		return Probed{}, fmt.Errorf("%w (ffprobe: %s)", ErrTruncated, msg)
	}
	return Probed{Info: info, Stream: stream, Output: out, Stderr: msg}, nil
}

// looksLikeMP4 reports whether src starts with an ISO BMFF "ftyp" box.
func looksLikeMP4(ctx context.Context, src string) bool {
	head := make([]byte, 12)
	if isURL(src) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
		if err != nil {
			return false
		}
		req.Header.Set("Range", "bytes=0-11")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		if _, err := io.ReadFull(resp.Body, head); err != nil {
			return false
		}
	} else {
		f, err := os.Open(src)
		if err != nil {
			return false
		}
		defer f.Close()
		if _, err := io.ReadFull(f, head); err != nil {
			return false
		}
	}
	return string(head[4:8]) == "ftyp"
}

// probeOutput is the part of ffprobe's JSON that Probe reads. ffprobe
// prints most numbers as strings.
type probeOutput struct {
	Streams []struct {
		Index         int    `json:"index"`
		CodecType     string `json:"codec_type"`
		CodecName     string `json:"codec_name"`
		Width         int    `json:"width"`
		Height        int    `json:"height"`
		RFrameRate    string `json:"r_frame_rate"`
		AvgFrameRate  string `json:"avg_frame_rate"`
		NbFrames      string `json:"nb_frames"`
		NbReadPackets string `json:"nb_read_packets"`
		Duration      string `json:"duration"`
		SampleAspect  string `json:"sample_aspect_ratio"`
		Disposition   struct {
			AttachedPic int `json:"attached_pic"`
		} `json:"disposition"`
		Tags struct {
			Rotate string `json:"rotate"`
		} `json:"tags"`
		SideData []struct {
			Type     string   `json:"side_data_type"`
			Rotation *float64 `json:"rotation"`
		} `json:"side_data_list"`
	} `json:"streams"`
	Format struct {
		FormatName string `json:"format_name"`
		Duration   string `json:"duration"`
	} `json:"format"`
}

// parseProbe decodes ffprobe's JSON (-show_format -show_streams
// -count_packets) into an Info, checking every figure.
func parseProbe(data []byte) (Info, error) {
	info, _, err := parseProbeStream(data)
	return info, err
}

// parseProbeStream is parseProbe, with the index of the stream described.
func parseProbeStream(data []byte) (Info, int, error) {
	var p probeOutput
	if err := json.Unmarshal(data, &p); err != nil {
		return Info{}, 0, fmt.Errorf("video: ffprobe output: %w", err)
	}
	if strings.Contains(p.Format.FormatName, "image2") || strings.HasSuffix(p.Format.FormatName, "_pipe") {
		return Info{}, 0, fmt.Errorf("%w (%.40s)", ErrStillImage, p.Format.FormatName)
	}
	for _, s := range p.Streams {
		if s.CodecType != "video" || s.Disposition.AttachedPic != 0 {
			continue
		}
		if s.CodecName == "" || s.CodecName == "none" || safeName(s.CodecName) != s.CodecName {
			return Info{}, 0, &UnsupportedCodecError{Codec: safeName(s.CodecName)}
		}
		if s.Width <= 0 || s.Height <= 0 {
			return Info{}, 0, fmt.Errorf("%w: no frame size", ErrNotVideo)
		}
		if s.Width > MaxDimension || s.Height > MaxDimension {
			return Info{}, 0, &TooLargeError{Width: s.Width, Height: s.Height}
		}
		frames, err := count(s.NbReadPackets)
		if n, perr := strconv.Atoi(s.NbReadPackets); perr == nil && n > MaxFrames {
			return Info{}, 0, fmt.Errorf("%w: %d", ErrTooManyFrames, n)
		}
		if err != nil {
			return Info{}, 0, fmt.Errorf("video: ffprobe nb_read_packets: %w", err)
		}
		if frames == 0 {
			return Info{}, 0, ErrNoFrames
		}
		if promised, err := count(s.NbFrames); err == nil && promised > frames {
			return Info{}, 0, fmt.Errorf("%w: %d of %d frames readable", ErrTruncated, frames, promised)
		}
		rate, ok := ratio(s.AvgFrameRate)
		if !ok {
			if rate, ok = ratio(s.RFrameRate); !ok {
				// A rate declared but out of range is named; none at all
				// is not a video.
				for _, declared := range []string{s.AvgFrameRate, s.RFrameRate} {
					if r, ok := anyRatio(declared); ok {
						return Info{}, 0, &FrameRateError{Rate: r}
					}
				}
				return Info{}, 0, fmt.Errorf("%w: no frame rate", ErrNotVideo)
			}
		}
		dur, ok := seconds(s.Duration)
		if !ok {
			if dur, ok = seconds(p.Format.Duration); !ok {
				dur = float64(frames) / rate
			}
		}
		d := time.Duration(math.Round(dur * float64(time.Second)))
		if d <= 0 {
			d = time.Duration(math.Round(float64(frames) / rate * float64(time.Second)))
		}
		rot := 0
		if r, err := strconv.Atoi(s.Tags.Rotate); err == nil {
			rot = r
		}
		for _, sd := range s.SideData {
			if sd.Rotation != nil && !math.IsNaN(*sd.Rotation) && math.Abs(*sd.Rotation) <= 1e6 {
				rot = int(math.Round(*sd.Rotation))
			}
		}
		rot = ((rot % 360) + 360) % 360 // clockwise display rotation is -rot; only its multiple of 90 matters
		sarN, sarD := 1, 1
		if n, d, ok := aspect(s.SampleAspect); ok {
			sarN, sarD = n, d
		}
		return Info{FrameCount: frames, FrameRate: rate, Width: s.Width, Height: s.Height, Duration: d, Codec: s.CodecName,
			Rotation: rot, SampleAspect: [2]int{sarN, sarD}}, s.Index, nil
	}
	return Info{}, 0, ErrNoVideoStream
}

// aspect parses a sample aspect ratio "num:den" (ffprobe prints "0:1" or
// "N/A" when unknown); ok is false for those and for absurd ratios.
func aspect(s string) (num, den int, ok bool) {
	a, b, found := strings.Cut(s, ":")
	if !found {
		return 0, 0, false
	}
	n, err1 := strconv.Atoi(a)
	d, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || n <= 0 || d <= 0 || n > 100*d || d > 100*n {
		return 0, 0, false
	}
	return n, d, true
}

func count(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > MaxFrames {
		return 0, fmt.Errorf("bad frame count %.20q", s)
	}
	return n, nil
}

// ratio parses "num/den" (or a plain number) into a frame rate within
// [MinFrameRate, MaxFrameRate].
func ratio(s string) (float64, bool) {
	r, ok := anyRatio(s)
	if !ok || r < MinFrameRate || r > MaxFrameRate {
		return 0, false
	}
	return r, true
}

// anyRatio parses "num/den" (or a plain number) into a positive, finite
// rate, however large or small.
func anyRatio(s string) (float64, bool) {
	num, den, found := strings.Cut(s, "/")
	n, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, false
	}
	d := 1.0
	if found {
		if d, err = strconv.ParseFloat(den, 64); err != nil || d == 0 {
			return 0, false
		}
	}
	r := n / d
	if math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
		return 0, false
	}
	return r, true
}

func seconds(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || v <= 0 || v > 1e7 {
		return 0, false
	}
	return v, true
}

// safeName keeps a codec name fit for a user-facing message.
func safeName(s string) string {
	if s == "" {
		return "unknown"
	}
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 32 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "unknown"
	}
	return b.String()
}

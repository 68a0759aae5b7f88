package media

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/video"
)

// Plan is how a movie's rendition is made: a remux of the upload's own
// packets (Copy set, chunks of Copy.GOP frames) or an encoding (chunks of
// ChunkFrames frames). It is decided once, by the first range of the
// ingest (PlanRendition reads only the upload, so deciding again gives the
// same plan), and recorded for the later ranges (Decision, decision.go).
type Plan struct {
	Copy        *CopyPlan
	ChunkFrames int
	// Reason is why the upload is encoded rather than remuxed ("" when it
	// is remuxed).
	Reason string
}

// Rendition names the plan on the movie's row (domain.Video.Rendition).
func (p Plan) Rendition() string {
	if p.Copy != nil {
		return domain.RenditionCopy
	}
	return domain.RenditionX264
}

// scanArgs ask the probe's ffprobe (video.ProbeMore) for what a remux
// plan reads: every packet's pts, flags, size and Adler-32, and the
// keyframes decoded alone (-skip_frame nokey; an H.264 stream changes its
// size only at an IDR picture) with their sizes, on one decoding thread
// and without deblocking (a keyframe's size and the decoder's messages do
// not depend on them, its CPU does).
var scanArgs = []string{"-threads", "1", "-skip_loop_filter", "all", "-skip_frame", "nokey",
	"-show_entries", "packet=stream_index,pts,flags,size,data_hash:frame=stream_index,width,height", "-show_data_hash", "adler32"}

// Decide is the movie's decision from one ffprobe of src, which reads it
// once: the probe (video.ProbeMore: the Info, the seek timing) and the
// rendition's plan as PlanRendition makes it. (Before, the probe, the
// timing, the packet scan and the keyframes were four ffprobes, each a
// process's start, the scan and the keyframes two more reads of the
// whole upload.) The keyframes of an upload that is not H.264 are decoded
// too, for nothing: 2-18 ms of CPU on opencv-doc's files, whose encoding
// takes seconds (docs/media.md).
func Decide(ctx context.Context, src string, chunkFrames int) (Decision, error) {
	p, err := video.ProbeMore(ctx, src, scanArgs...)
	if err != nil {
		return Decision{}, err
	}
	return Decision{Info: p.Info, Timing: p.Timing, Plan: planFrom(p, chunkFrames)}, nil
}

// PlanRendition decides how src is prepared: a remux when the upload is
// already what the chunks would be (scan.go), else an encoding in chunks
// of chunkFrames (DefaultChunkFrames when 0). For an H.264 upload it runs
// Decide's ffprobe (every packet read, the keyframes decoded alone) and
// plans as Decide does, with info for the probe's. A scan that fails is a
// reason to encode, not an error.
func PlanRendition(ctx context.Context, src string, info video.Info, chunkFrames int) Plan {
	p := video.Probed{Info: info}
	if info.Codec == "h264" {
		var err error
		if p, err = video.ProbeMore(ctx, src, scanArgs...); err != nil {
			return Plan{ChunkFrames: chunkSize(chunkFrames), Reason: "the packets could not be read: " + err.Error()}
		}
		p.Info = info
	}
	return planFrom(p, chunkFrames)
}

// chunkSize is an encoding's chunk size: n, or DefaultChunkFrames when 0.
func chunkSize(n int) int {
	if n <= 0 {
		return DefaultChunkFrames
	}
	return n
}

// planFrom plans the rendition from a probe that ran with scanArgs: a
// stream whose size changes midway is encoded (at one size), and so is
// one whose probe gave any message.
func planFrom(p video.Probed, chunkFrames int) Plan {
	chunkFrames = chunkSize(chunkFrames)
	encode := func(reason string) Plan { return Plan{ChunkFrames: chunkFrames, Reason: reason} }
	info := p.Info
	if info.Codec != "h264" {
		return encode("the codec is " + info.Codec + ", not h264")
	}
	st, pkts, err := parseScan(p.Output, p.Stream)
	if err != nil {
		return encode(err.Error())
	}
	// The stream's structure says first why it is not remuxed (an open
	// GOP also makes the keyframes alone give decoder messages).
	plan, reason := planCopy(st, pkts, info.Rotation, info.SampleAspect)
	if plan == nil {
		return encode(reason)
	}
	if p.Stderr != "" {
		return encode("the keyframes could not be decoded: ffprobe: " + p.Stderr)
	}
	if reason := sizeChange(plan, st.keySizes); reason != "" {
		return encode(reason)
	}
	if plan.Frames != info.FrameCount {
		return encode(fmt.Sprintf("the scan read %d packets where the probe counted %d", plan.Frames, info.FrameCount))
	}
	return Plan{Copy: plan, ChunkFrames: plan.GOP}
}

// ErrCopyRejected: a remuxed chunk was not the upload's frames (its
// packets differ, or it does not decode to its frame count cleanly); it
// was not stored, and the range ended before it.
var ErrCopyRejected = errors.New("media: a remuxed chunk was not proven")

// copyArgs are the remux's ffmpeg arguments before the segment muxer's:
// a range after frame 0 seeks to its keyframe (at the frame's own time:
// the demuxer lands on the keyframe at or before it, which is that frame's
// when keyframes are every GOP frames), the timestamps start at 0 in every
// chunk (setts and no shift of negative decode times, which B-frames need).
func copyArgs(p *CopyPlan, from int, in []string) []string {
	args := []string{"-nostdin", "-hide_banner", "-v", "error"}
	if from > 0 {
		at := p.Start + float64(from)*p.Step + p.Step/4
		args = append(args, "-ss", strconv.FormatFloat(at, 'f', 6, 64))
	}
	args = append(args, in...)
	return append(args, "-map", "0:v:0", "-an", "-sn", "-dn", "-c:v", "copy",
		"-bsf:v", "setts=pts=PTS-STARTPTS:dts=DTS-STARTPTS", "-avoid_negative_ts", "disabled")
}

// verifyChunks proves chunks k0, ..., k0+n-1 of plan p (files in dir, see
// scan.go) with one ffmpeg: each chunk is an input of its own (its own
// decoder, so each decodes alone), decoded to a framecrc of wrapped frames
// (a line per decoded frame, no pixel hashed) and copied to a framecrc of
// its packets (each one's size and Adler-32). It returns how many leading
// chunks are proven and, when fewer than n, why the next one is not
// (ErrCopyRejected). A decoder's message names no input: with any, the
// chunks are proven one by one to find the first that is not. The decode
// proves structure, not pixels (the packets are the upload's, byte for
// byte): each decoder runs on one thread and skips the deblocking filter,
// which changes no frame's existence or references and costs a fifth of
// the decode (measured, docs/media.md). No input is probed
// (-nofind_stream_info): the probe decoded each chunk's first frames (its
// keyframe, the costliest) once more before the decoder did, about 18 ms
// of a 768x576 chunk's 28 ms of overhead (docs/media.md); the decoder
// reads the chunk's own parameters (avcC) either way.
func verifyChunks(ctx context.Context, p *CopyPlan, dir string, k0, n int) (int, error) {
	bin, err := video.FFmpegPath()
	if err != nil {
		return 0, err
	}
	args := []string{"-nostdin", "-hide_banner", "-v", "error"}
	// Each chunk's timestamps start after the one before ends (-itsoffset:
	// ffmpeg reads the input whose output is furthest behind), so the
	// chunks are decoded one after the other, not a frame of each in turn,
	// and a decoder's reference frames are still in the cache when it
	// decodes the next (10 chunks of 720x528: 310-327 ms of CPU against
	// 343-373 interleaved). The timestamps are not what is proven.
	span := int(math.Ceil(float64(p.GOP)*p.Step)) + 1
	for i := range n {
		args = append(args, "-itsoffset", strconv.Itoa(i*span), "-nofind_stream_info", "-threads", "1", "-skip_loop_filter", "all",
			"-i", filepath.Join(dir, segmentName(k0+i)))
	}
	for i := range n {
		m := strconv.Itoa(i) + ":v:0"
		args = append(args, "-map", m, "-c:v", "wrapped_avframe", "-f", "framecrc", filepath.Join(dir, fmt.Sprintf("v%d.crc", i)),
			"-map", m, "-c:v", "copy", "-f", "framecrc", filepath.Join(dir, fmt.Sprintf("p%d.crc", i)))
	}
	cmd := exec.CommandContext(ctx, bin, append(args, "-y")...)
	stderr := video.NewTail(2048)
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if (runErr != nil || stderr.String() != "") && n > 1 {
		for i := range n {
			if ok, err := verifyChunks(ctx, p, dir, k0+i, 1); ok == 0 {
				return i, err
			}
		}
		return n, nil
	}
	if runErr != nil || stderr.String() != "" {
		return 0, fmt.Errorf("%w: chunk %d does not decode cleanly: %v %s", ErrCopyRejected, k0, runErr, stderr.String())
	}
	for i := range n {
		k := k0 + i
		if err := checkChunk(p, k, filepath.Join(dir, fmt.Sprintf("v%d.crc", i)), filepath.Join(dir, fmt.Sprintf("p%d.crc", i))); err != nil {
			return i, err
		}
	}
	return n, nil
}

// checkChunk compares chunk k's decoded frames and packets (framecrc
// files) with the plan's.
func checkChunk(p *CopyPlan, k int, framesPath, packetsPath string) error {
	frames, err1 := os.ReadFile(framesPath)
	packets, err2 := os.ReadFile(packetsPath)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	decoded, err1 := parseFrameCRC(string(frames))
	sums, err2 := parseFrameCRC(string(packets))
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("%w: chunk %d: %v", ErrCopyRejected, k, err)
	}
	want := p.chunkSums(k)
	if len(want) == 0 || len(sums) != len(want) || len(decoded) != len(want) {
		return fmt.Errorf("%w: chunk %d has %d packets and decodes to %d frames, want %d", ErrCopyRejected, k, len(sums), len(decoded), len(want))
	}
	for i := range want {
		if sums[i] != want[i] {
			return fmt.Errorf("%w: chunk %d packet %d is not the upload's packet %d", ErrCopyRejected, k, i, k*p.GOP+i)
		}
	}
	return nil
}

// PrepareRange prepares one range by plan: the remux when plan.Copy is
// set, and from the first chunk it could not prove (ErrCopyRejected), the
// encoding, in chunks of the same size, so the layout stays one fixed
// ChunkFrames. Every chunk is stored once under its fixed key either way;
// the next range tries the remux again (a rejected chunk is rejected
// again, quickly, at its start).
func PrepareRange(ctx context.Context, src string, plan Plan, o PrepareOptions, store func(context.Context, Chunk) error) (Prepared, error) {
	o.ChunkFrames = plan.ChunkFrames
	if plan.Copy == nil {
		o.Copy = nil
		return Prepare(ctx, src, o, store)
	}
	o.Copy = plan.Copy
	res, err := Prepare(ctx, src, o, store)
	if !errors.Is(err, ErrCopyRejected) {
		return res, err
	}
	if res.NextFrame > o.FromFrame && !o.Deadline.IsZero() && !time.Now().Before(o.Deadline) {
		return res, nil // the range is over; the next one encodes the rejected chunk
	}
	enc := o
	enc.Copy, enc.FromFrame = nil, res.NextFrame
	if enc.FromFrame > 0 && enc.Timing.Rate == 0 {
		if t, err := video.ProbeTiming(ctx, src); err == nil {
			enc.Timing = t
		}
	}
	if enc.MaxChunks > 0 {
		enc.MaxChunks -= (res.NextFrame - o.FromFrame) / plan.ChunkFrames
		if enc.MaxChunks <= 0 {
			return res, nil
		}
	}
	more, err := Prepare(ctx, src, enc, store)
	if more.Width == 0 {
		more.Width, more.Height = res.Width, res.Height
	}
	more.Stored += res.Stored
	more.Copied += res.Copied
	return more, err
}

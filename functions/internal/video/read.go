package video

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"time"
)

// readAhead is how many decoded frames ReadFrames buffers.
const readAhead = 3

// ffmpegArgs, when set (by tests), sees the arguments of each ffmpeg run.
var ffmpegArgs func([]string)

// ReadOptions choose the frames ReadFrames delivers and their size.
type ReadOptions struct {
	// Start and End are the range of frame indexes [Start, End). End 0
	// means the end of the movie.
	Start, End int
	// Step delivers every Step-th frame from Start (Start, Start+Step, ...);
	// 0 means 1.
	Step int
	// Width and Height scale the frames (area averaging); 0, 0 means the
	// source's size (ReadFrames then probes src first).
	Width, Height int
	// Timing, when set (ProbeTiming found a constant frame rate), makes a
	// read that starts after frame 0 seek: ffmpeg's accurate seek (-ss
	// before -i) to half a frame before Start, so that only the frames from
	// the keyframe before Start are decoded, not every frame before it.
	// Leave it zero for a source of variable or unknown rate: frames are
	// then chosen by decode index from frame 0.
	Timing Timing
}

// ReadFrames decodes src and calls fn, in order, with each frame of
// opts' range and step, as 8-bit grayscale. Memory is three frame buffers
// (frames decoded ahead while fn runs), reused: Gray is valid only during
// fn (copy it to keep it). ffmpeg runs in its own process.
//
// Frames are chosen by their decode index (ffmpeg's select filter on n,
// passthrough sync), never by timestamp, so frame N is the N-th decoded
// frame even in a variable-rate file. When End is set and the movie ends
// before it, ReadFrames returns ErrTruncated after the last frame it could
// read. If fn returns an error or ctx is done, ffmpeg is killed and
// ReadFrames returns that error.
func ReadFrames(ctx context.Context, src string, opts ReadOptions, fn func(Frame) error) error {
	step := max(opts.Step, 1)
	if opts.Start < 0 || opts.End < 0 || opts.Step < 0 || (opts.End > 0 && opts.End <= opts.Start) ||
		opts.Width < 0 || opts.Height < 0 || opts.Width > MaxDimension || opts.Height > MaxDimension ||
		(opts.Width == 0) != (opts.Height == 0) {
		return fmt.Errorf("video: invalid read options %+v", opts)
	}
	in, err := input(src)
	if err != nil {
		return err
	}
	bin, err := ffmpegPath()
	if err != nil {
		return err
	}
	w, h := opts.Width, opts.Height
	scale := w != 0
	if !scale {
		info, err := Probe(ctx, src)
		if err != nil {
			return err
		}
		w, h = info.Width, info.Height
	}

	// With a seek, the first frame decoded is frame Start (decode index n
	// counts from there); without, frame 0.
	var seek []string
	base := 0
	if opts.Timing.Rate > 0 && opts.Start > 0 {
		base = opts.Start
		at := opts.Timing.Offset + (float64(opts.Start)-0.5)/opts.Timing.Rate
		seek = []string{"-accurate_seek", "-ss", strconv.FormatFloat(at, 'f', 6, 64)}
	}
	filter := "select='gte(n," + strconv.Itoa(opts.Start-base) + ")"
	if opts.End > 0 {
		filter += "*lt(n," + strconv.Itoa(opts.End-base) + ")"
	}
	if step > 1 {
		filter += "*not(mod(n-" + strconv.Itoa(opts.Start-base) + "," + strconv.Itoa(step) + "))"
	}
	filter += "'"
	if scale {
		filter += ",scale=" + strconv.Itoa(w) + ":" + strconv.Itoa(h) + ":flags=area"
	}
	filter += ",format=gray"

	args := append(append([]string{"-nostdin", "-hide_banner", "-v", "error"}, seek...), in...)
	args = append(args, "-an", "-sn", "-dn", "-vf", filter, "-vsync", "passthrough")
	want := -1
	if opts.End > 0 {
		want = (opts.End - opts.Start + step - 1) / step
		// Stop as soon as the last wanted frame is out, instead of decoding to the end.
		args = append(args, "-frames:v", strconv.Itoa(want))
	}
	args = append(args, "-f", "rawvideo", "-pix_fmt", "gray", "pipe:1")

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if ffmpegArgs != nil {
		ffmpegArgs(args)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("video: ffmpeg: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("video: start ffmpeg: %w", err)
	}

	// A reader goroutine decodes ahead into a ring of readAhead buffers
	// while fn works on the previous frame, so ffmpeg and the caller run
	// in parallel; memory stays readAhead frames.
	free := make(chan []byte, readAhead)
	full := make(chan []byte, readAhead)
	for range readAhead {
		free <- make([]byte, w*h)
	}
	var readErr error // set by the reader before it closes full
	go func() {
		defer close(full)
		for k := 0; want < 0 || k < want; k++ {
			var buf []byte
			select {
			case buf = <-free:
			case <-ctx.Done():
				return
			}
			if _, err := io.ReadFull(stdout, buf); err != nil {
				if !errors.Is(err, io.EOF) {
					readErr = err
				}
				return
			}
			full <- buf // never blocks: there are only readAhead buffers
		}
	}()
	n := 0
	for buf := range full {
		if err := ctx.Err(); err != nil {
			break
		}
		if err := fn(Frame{Index: opts.Start + n*step, Width: w, Height: h, Gray: buf}); err != nil {
			cancel()
			for range full {
			}
			_ = cmd.Wait()
			return err
		}
		n++
		free <- buf
	}
	for range full { // the reader has stopped (ctx done): let it finish
	}
	waitErr := cmd.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	msg := stderr.String()
	if waitErr != nil {
		if kind := classify(msg); kind != nil {
			return fmt.Errorf("%w after %d frames (ffmpeg: %s)", kind, n, msg)
		}
		return fmt.Errorf("video: ffmpeg after %d frames: %w: %s", n, waitErr, msg)
	}
	if readErr != nil {
		return fmt.Errorf("%w: a partial frame after %d frames: %v", ErrTruncated, n, readErr)
	}
	if want >= 0 && n < want {
		if n == 0 && opts.Start > 0 {
			return fmt.Errorf("%w: no frame at or after %d", ErrTruncated, opts.Start)
		}
		return fmt.Errorf("%w: %d of %d frames decoded (ffmpeg: %s)", ErrTruncated, n, want, msg)
	}
	if n == 0 {
		return ErrNoFrames
	}
	return nil
}

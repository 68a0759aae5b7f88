// Package videotest writes video files from frames computed in Go, through
// ffmpeg: for tests, sample movies and the tracer's ground-truth benchmark.
package videotest

import (
	"context"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strconv"
)

// Codec is how Encode compresses the frames.
type Codec int

const (
	// H264 is libx264 at CRF 18 in yuv420p: what a camera or phone gives.
	H264 Codec = iota
	// H264Lossless is libx264 with -qp 0 in full-range 8-bit gray: decoded luma equals
	// the frames written, exactly.
	H264Lossless
	// FFV1 is the lossless FFV1 codec in gray, in Matroska.
	FFV1
)

// Options describe the movie Encode writes.
type Options struct {
	Width, Height int
	FrameRate     int
	Frames        int
	Codec         Codec
	// Extra output arguments for ffmpeg, before the file name (e.g.
	// "-movflags", "+faststart").
	Extra []string
}

// Encode writes opts.Frames frames to path; frame(i, gray) fills the
// Width*Height 8-bit luma of frame i (row-major) into gray, which is reused.
func Encode(ctx context.Context, path string, opts Options, frame func(i int, gray []byte)) error {
	args := []string{"-nostdin", "-hide_banner", "-v", "error", "-y",
		"-f", "rawvideo", "-pix_fmt", "gray", "-s", strconv.Itoa(opts.Width) + "x" + strconv.Itoa(opts.Height),
		"-r", strconv.Itoa(max(opts.FrameRate, 1)), "-i", "pipe:0"}
	switch opts.Codec {
	case H264:
		args = append(args, "-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-pix_fmt", "yuv420p")
	case H264Lossless:
		args = append(args, "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", "-pix_fmt", "gray", "-color_range", "pc")
	case FFV1:
		args = append(args, "-c:v", "ffv1", "-pix_fmt", "gray")
	default:
		return fmt.Errorf("videotest: unknown codec %d", opts.Codec)
	}
	args = append(args, opts.Extra...)
	args = append(args, path)
	cmd := exec.CommandContext(ctx, ffmpegBin(), args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out := &limited{max: 4096}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("videotest: start ffmpeg: %w", err)
	}
	buf := make([]byte, opts.Width*opts.Height)
	var werr error
	for i := 0; i < opts.Frames && werr == nil; i++ {
		frame(i, buf)
		_, werr = stdin.Write(buf)
	}
	cerr := stdin.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("videotest: ffmpeg: %w: %s", err, out.b)
	}
	if werr != nil {
		return werr
	}
	return cerr
}

type limited struct {
	max int
	b   []byte
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

var _ io.Writer = (*limited)(nil)

// PSNR is the peak signal-to-noise ratio of two 8-bit planes of one size, in
// dB (+Inf when they are equal): how the tests bound a lossy rendition's
// difference from the frame the tracer reads.
func PSNR(a, b []byte) float64 {
	var se float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		se += d * d
	}
	if se == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(255*255/(se/float64(len(a))))
}

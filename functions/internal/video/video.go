// Package video reads movies through ffmpeg and ffprobe: Probe describes a
// file (frame count, rate, size, duration, codec) and ReadFrames streams a
// range of its frames as 8-bit grayscale, frame-accurately and with bounded
// memory, whatever the movie's length.
//
// Both run the ffmpeg/ffprobe executables named by the environment
// variables FFMPEG and FFPROBE, else found on PATH. A source is a local file
// path or an http(s) URL (a presigned S3 GET); no other ffmpeg protocol is
// allowed, so a crafted name cannot make ffmpeg open anything else.
//
// Frame N is the N-th frame the decoder outputs, counting from 0, with no
// frame dropped or duplicated (ffmpeg's passthrough sync): the same
// numbering Probe's FrameCount counts and every reader of the same file with
// the same decoder sees.
package video

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/movietrace/tracinglocks/functions/envvar"
)

// Info describes a movie's first video stream.
type Info struct {
	FrameCount    int
	FrameRate     float64 // frames per second (the stream's average rate)
	Width, Height int
	Duration      time.Duration
	Codec         string // ffmpeg's codec name, e.g. "h264"
	// Rotation is the display matrix's rotation in degrees, in [0, 360)
	// (ffmpeg applies it when decoding: autorotate); SampleAspect the
	// pixels' aspect ratio {num, den} ({1, 1}: square).
	Rotation     int
	SampleAspect [2]int
}

// Frame is one decoded frame. Gray holds Width*Height 8-bit luma samples,
// row-major. ReadFrames reuses the buffer: it is valid only during the
// callback that receives it.
type Frame struct {
	Index         int
	Width, Height int
	Gray          []byte
}

// Errors Probe and ReadFrames return (wrapped, test with errors.Is). Each
// has a short user-facing meaning an ingest can show; the wrapped error's
// text (ffmpeg's own words) is for the logs only.
var (
	ErrNotVideo         = errors.New("not a video file")
	ErrTruncated        = errors.New("the video file is truncated")
	ErrUnsupportedCodec = errors.New("the video codec is not supported")
	ErrNoFrames         = errors.New("the video has no frames")
	ErrTooLarge         = errors.New("the video's frames are too large")
	ErrBadSource        = errors.New("the video source is not a local path or http(s) URL")
	// ErrFrameRate: the declared frame rate is outside [MinFrameRate,
	// MaxFrameRate] (a *FrameRateError names it).
	ErrFrameRate = errors.New("the video's frame rate is out of range")
	// ErrTooManyFrames: more than MaxFrames frames.
	ErrTooManyFrames = errors.New("the video has too many frames")

	// Kinds of ErrNotVideo (errors.Is(err, ErrNotVideo) holds for each),
	// for a sentence that says which.
	ErrEmpty         = fmt.Errorf("%w: the file is empty", ErrNotVideo)
	ErrStillImage    = fmt.Errorf("%w: a still image", ErrNotVideo)
	ErrNoVideoStream = fmt.Errorf("%w: no video stream", ErrNotVideo)
)

// TooLargeError names a frame size over MaxDimension; errors.Is(err,
// ErrTooLarge) holds for it.
type TooLargeError struct{ Width, Height int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("video: the frames are %dx%d, over %d a side", e.Width, e.Height, MaxDimension)
}

func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// FrameRateError names a declared frame rate out of range; errors.Is(err,
// ErrFrameRate) holds for it.
type FrameRateError struct{ Rate float64 }

func (e *FrameRateError) Error() string {
	return fmt.Sprintf("video: a frame rate of %g per second, outside %g-%d", e.Rate, MinFrameRate, MaxFrameRate)
}

func (e *FrameRateError) Is(target error) bool { return target == ErrFrameRate }

// Limits on what Probe accepts.
const (
	MaxDimension = 8192 // pixels, each side
	MaxFrames    = 10_000_000
	MaxFrameRate = 1000
	// MinFrameRate is one frame every 1,000 seconds (a slow time-lapse).
	MinFrameRate = 0.001
)

// Environment variables naming the executables.
const (
	EnvFFmpeg  = envvar.FFmpeg
	EnvFFprobe = envvar.FFprobe
)

func ffmpegPath() (string, error)  { return lookTool(EnvFFmpeg, "ffmpeg") }
func ffprobePath() (string, error) { return lookTool(EnvFFprobe, "ffprobe") }

func lookTool(env, name string) (string, error) {
	if p := os.Getenv(env); p != "" {
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("video: %s not found (set %s or put it on PATH): %w", name, env, err)
	}
	return p, nil
}

// input turns a source into ffmpeg input arguments: the protocol whitelist
// and the input URL. A local path gets the file: prefix, so a name starting
// with "-" or looking like another protocol ("concat:", "subfile,") is still
// just a file name.
func input(src string) ([]string, error) {
	switch {
	case src == "":
		return nil, ErrBadSource
	case strings.HasPrefix(src, "https://"), strings.HasPrefix(src, "http://"):
		return []string{"-protocol_whitelist", "https,http,tls,tcp,crypto", "-i", src}, nil
	case strings.Contains(src, "://"):
		return nil, fmt.Errorf("%w: scheme of %.40q", ErrBadSource, src)
	default:
		return []string{"-protocol_whitelist", "file", "-i", "file:" + src}, nil
	}
}

func isURL(src string) bool {
	return strings.HasPrefix(src, "https://") || strings.HasPrefix(src, "http://")
}

// tailBuffer keeps the last max bytes written to it (ffmpeg's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}

// classify maps ffmpeg/ffprobe's error output to a typed error, or nil when
// nothing in it is recognised.
func classify(stderr string) error {
	switch {
	case strings.Contains(stderr, "partial file"), strings.Contains(stderr, "End of file"),
		strings.Contains(stderr, "error reading header"):
		return ErrTruncated
	case strings.Contains(stderr, "Decoder (codec") && strings.Contains(stderr, "not found"),
		strings.Contains(stderr, "Unsupported codec"):
		return ErrUnsupportedCodec
	case strings.Contains(stderr, "Invalid data found when processing input"),
		strings.Contains(stderr, "moov atom not found"):
		return ErrNotVideo
	}
	return nil
}

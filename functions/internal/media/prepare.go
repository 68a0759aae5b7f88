package media

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/video"
)

// Encoding of the rendition: libx264 "veryfast" at CRF 20 (measured in
// docs/media.md: 0.7-1.2x the upload's bytes on real and generated
// footage, where "ultrafast" took 2.3x), a keyframe at every chunk's start
// and every KeyFrameInterval frames within it.
const (
	X264Preset = "veryfast"
	X264CRF    = "20"
	// KeyFrameInterval: the viewer decodes a frame from the keyframe at or
	// before it (images.go), so a jump decodes at most this many frames
	// instead of up to a whole chunk. 20 keeps the rendition within 1.5x
	// of the upload (docs/media.md, "Keyframes inside a chunk": 15 took
	// 1.52x on a static-camera clip).
	KeyFrameInterval = 20
)

// PrepareOptions describe one range of a movie's preparation.
type PrepareOptions struct {
	// ChunkFrames is the chunk size (DefaultChunkFrames when 0).
	ChunkFrames int
	// FromFrame is the first frame to prepare, a multiple of ChunkFrames:
	// the frames before it are prepared already.
	FromFrame int
	// ExpectedFrames is the probe's frame count: the chunk boundaries are
	// listed up to it (and a little past, should the decoder give more).
	ExpectedFrames int
	// FrameRate is the rendition's constant rate.
	FrameRate float64
	// Width and Height are the rendition's frame size (RenditionSize of
	// the upload's probe), Rotation its display rotation: every frame is
	// scaled to this one size, whatever size the stream changes to
	// midway. Zero: Prepare probes src for them.
	Width, Height, Rotation int
	// Timing, when set (a constant-rate upload), makes a range that starts
	// after frame 0 seek instead of decoding every frame before it.
	Timing video.Timing
	// Deadline: no chunk is started after it; the range ends with the
	// chunks finished by then, or, when none is finished yet, with its
	// first chunk (so every range makes progress on a loaded machine).
	Deadline time.Time
	// HardDeadline (after Deadline; zero: none) ends a range that has not
	// finished its first chunk by then with ErrNoProgress.
	HardDeadline time.Time
	// TempDir holds the chunks until they are stored (os.TempDir when "").
	TempDir string
	// MaxChunks (0: no limit) ends the range after this many chunks, as
	// its deadline would: tests make ranges of a known size with it.
	MaxChunks int
	// Copy, when set (ChunkFrames must be its GOP), remuxes the upload's
	// own packets at its keyframes instead of encoding (scan.go,
	// copyrange.go); every chunk is proven before it is stored, and the
	// first that is not ends the range with ErrCopyRejected (PrepareRange
	// then encodes from it).
	Copy *CopyPlan
}

// encodeAhead bounds the encoded chunks waiting in the temporary
// directory: beyond it the encoder is paused (SIGSTOP) until they are
// stored. The encoder is far slower than a chunk's store (seconds per
// chunk at 1080p against a PUT of a few MB), so this holds only if the
// stores stall; it is checked every aheadTick, independently of them.
// (The remux is bounded by construction: copyrange.go.)
const encodeAhead = 8

const aheadTick = 100 * time.Millisecond

// Chunk is one finished chunk, a local file until Prepare returns.
type Chunk struct {
	Index int
	Path  string
}

// Prepared is what a range did.
type Prepared struct {
	// NextFrame is the first frame not prepared: every chunk below
	// NextFrame/ChunkFrames was stored.
	NextFrame int
	// Done: the movie ended in this range; NextFrame is its frame count.
	Done bool
	// Width and Height are the rendition's frame size, read from a chunk
	// of this range (0 when it stored none).
	Width, Height int
	// Stored counts the chunks this range stored, Copied those of them
	// that are remuxes (the others were encoded).
	Stored, Copied int
}

// ErrNoProgress: a range reached its hard deadline before it finished a
// single chunk; a longer budget is needed.
var ErrNoProgress = errors.New("media: the range finished no chunk before its hard deadline")

// Prepare decodes src from o.FromFrame and writes the rendition's chunks,
// calling store for each finished chunk in order (store must be idempotent:
// a chunk's key is fixed, so a redone range writes the same objects). It
// stops at o.Deadline or at the end of the movie. One ffmpeg process decodes
// (autorotate on, sample aspect applied, passthrough sync) and encodes
// (libx264, a keyframe every ChunkFrames frames) into the segment muxer;
// finished chunks are stored while later ones are encoded.
func Prepare(ctx context.Context, src string, o PrepareOptions, store func(context.Context, Chunk) error) (Prepared, error) {
	n := o.ChunkFrames
	if n == 0 {
		n = DefaultChunkFrames
	}
	if n < 1 || o.FromFrame < 0 || o.FromFrame%n != 0 || !(o.FrameRate > 0) || o.ExpectedFrames < 0 ||
		(o.Copy != nil && o.Copy.GOP != n) {
		return Prepared{}, fmt.Errorf("media: invalid prepare options %+v", o)
	}
	in, err := video.InputArgs(src)
	if err != nil {
		return Prepared{}, err
	}
	bin, err := video.FFmpegPath()
	if err != nil {
		return Prepared{}, err
	}
	dir, err := os.MkdirTemp(o.TempDir, "chunks-")
	if err != nil {
		return Prepared{}, err
	}
	defer os.RemoveAll(dir)
	if o.Copy != nil {
		return prepareCopy(ctx, src, o, dir, store)
	}

	if o.Width <= 0 || o.Height <= 0 {
		info, err := video.Probe(ctx, src)
		if err != nil {
			return Prepared{}, err
		}
		o.Width, o.Height = RenditionSize(info)
		o.Rotation = info.Rotation
	}

	first := o.FromFrame / n
	var seek []string
	skip := o.FromFrame
	if o.Timing.Rate > 0 && o.FromFrame > 0 {
		at := o.Timing.Offset + (float64(o.FromFrame)-0.5)/o.Timing.Rate
		seek = []string{"-accurate_seek", "-ss", strconv.FormatFloat(at, 'f', 6, 64)}
		skip = 0
	}
	filter := ""
	if skip > 0 {
		filter = "select='gte(n," + strconv.Itoa(skip) + ")',"
	}
	// One size for every frame (a stream may change its size midway: two
	// recordings joined, a new SPS): the scale's target is fixed, not the
	// input's size.
	filter += "scale=" + strconv.Itoa(o.Width) + ":" + strconv.Itoa(o.Height) + ",setsar=1,format=yuv420p,setpts=N/(" +
		strconv.FormatFloat(o.FrameRate, 'f', 6, 64) + "*TB)"
	if o.Rotation == 0 {
		// A frame of another size goes through the same filters: ffmpeg's
		// default rebuilds them, restarting select's n and setpts's N, so
		// a range that skips frames would skip them again from the size
		// change and the timestamps would go back. The scale filter
		// follows a size change by itself. (A rotated stream keeps the
		// rebuild: the autorotate transpose in front of the scale cannot
		// take another size; see docs/media.md.)
		seek = append([]string{"-reinit_filter", "0"}, seek...)
	}
	// Chunk boundaries, counted from this range's first frame.
	remaining := max(o.ExpectedFrames-o.FromFrame, 0) + 4*n
	var cuts []string
	for f := n; f < remaining; f += n {
		cuts = append(cuts, strconv.Itoa(f))
	}
	args := append(append([]string{"-nostdin", "-hide_banner", "-v", "error"}, seek...), in...)
	args = append(args, "-map", "0:v:0", "-an", "-sn", "-dn", "-vsync", "passthrough", "-vf", filter,
		"-c:v", "libx264", "-preset", X264Preset, "-crf", X264CRF, "-pix_fmt", "yuv420p",
		"-g", strconv.Itoa(min(n, KeyFrameInterval)), "-keyint_min", strconv.Itoa(min(n, KeyFrameInterval)), "-sc_threshold", "0",
		"-force_key_frames", "expr:eq(mod(mod(n,"+strconv.Itoa(n)+"),"+strconv.Itoa(KeyFrameInterval)+"),0)")
	args = append(args, "-f", "segment", "-segment_start_number", strconv.Itoa(first), "-reset_timestamps", "1",
		"-segment_format", "mp4", "-segment_list", filepath.Join(dir, "list.csv"), "-segment_list_type", "csv")
	if len(cuts) > 0 {
		args = append(args, "-segment_frames", strings.Join(cuts, ","))
	} else {
		args = append(args, "-segment_time", "1e9")
	}
	args = append(args, filepath.Join(dir, "c%09d.mp4"))

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	cmd := exec.CommandContext(runCtx, bin, args...)
	stderr := video.NewTail(4096)
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return Prepared{}, fmt.Errorf("media: start ffmpeg: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	res := Prepared{NextFrame: o.FromFrame}
	hold, held := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(held)
		holdBack(hold, cmd.Process.Signal, dir)
	}()
	defer func() {
		close(hold)
		<-held
	}()
	stored := 0    // chunks of this range stored, from first
	lastPath := "" // the last stored chunk, kept to count its frames
	more := false  // chunks finished but not stored: the range is over
	// full: the range stored what it may (MaxChunks, or its deadline has
	// passed and it stored one chunk at least).
	full := func() bool {
		return (o.MaxChunks > 0 && stored >= o.MaxChunks) ||
			(stored > 0 && !o.Deadline.IsZero() && !time.Now().Before(o.Deadline))
	}
	storeFinished := func() error {
		data, err := os.ReadFile(filepath.Join(dir, "list.csv"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		list, err := parseSegmentList(string(data))
		if err != nil {
			return err
		}
		more = false
		for ; stored < len(list); stored++ {
			if full() {
				more = true
				break
			}
			k := list[stored]
			if k != first+stored {
				return fmt.Errorf("media: segment %d listed where %d was expected", k, first+stored)
			}
			c := Chunk{Index: k, Path: filepath.Join(dir, segmentName(k))}
			if res.Width == 0 {
				if info, err := video.Probe(ctx, c.Path); err == nil {
					res.Width, res.Height = info.Width, info.Height
				}
			}
			if err := store(ctx, c); err != nil {
				return err
			}
			if lastPath != "" {
				_ = os.Remove(lastPath)
			}
			lastPath = c.Path
			res.NextFrame = (k + 1) * n
			res.Stored++
		}
		return nil
	}

	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var deadline, hard <-chan time.Time
	if !o.Deadline.IsZero() {
		t := time.NewTimer(time.Until(o.Deadline))
		defer t.Stop()
		deadline = t.C
	}
	if !o.HardDeadline.IsZero() {
		t := time.NewTimer(time.Until(o.HardDeadline))
		defer t.Stop()
		hard = t.C
	}
	// lastCount counts the frames of the last chunk stored (none in the
	// empty segment ffmpeg writes when a range starts at the movie's end).
	lastCount := func() (int, error) {
		info, err := video.Probe(ctx, lastPath)
		switch {
		case err == nil:
		case errors.Is(err, video.ErrNotVideo), errors.Is(err, video.ErrNoFrames):
			return 0, nil
		default:
			return 0, fmt.Errorf("media: the last chunk: %w", err)
		}
		if info.FrameCount > n {
			return 0, fmt.Errorf("media: the last chunk has %d frames, more than %d", info.FrameCount, n)
		}
		return info.FrameCount, nil
	}
	// finish ends a range whose ffmpeg exited by itself: the movie ended.
	finish := func() (Prepared, error) {
		// The last segment is listed when ffmpeg closes it.
		if err := storeFinished(); err != nil {
			return res, err
		}
		if more {
			return res, nil // the range is full: the movie goes on
		}
		// The movie's frame count: the full chunks before the last, and
		// the last one's own count.
		if stored > 0 {
			count, err := lastCount()
			if err != nil {
				return res, err
			}
			res.NextFrame = (first+stored-1)*n + count
		}
		if res.NextFrame == 0 {
			return res, video.ErrNoFrames
		}
		res.Done = true
		return res, nil
	}
	// end ends a range early (its deadline): the chunks finished are
	// stored; ffmpeg may have ended by itself meanwhile.
	end := func() (Prepared, error) {
		stop()
		if werr := <-exited; werr == nil && ctx.Err() == nil {
			return finish()
		}
		if err := storeFinished(); err != nil {
			return res, err
		}
		if res.NextFrame == o.FromFrame {
			return res, ErrNoProgress
		}
		// The last chunk stored may be the movie's last (a short one),
		// closed just before ffmpeg was stopped.
		count, err := lastCount()
		if err != nil {
			return res, err
		}
		if count < n && !more {
			res.NextFrame = (first+stored-1)*n + count
			res.Done = true
		}
		return res, nil
	}
	for {
		select {
		case <-tick.C:
			if err := storeFinished(); err != nil {
				stop()
				<-exited
				return res, err
			}
			if full() {
				return end()
			}
		case <-deadline:
			if err := storeFinished(); err != nil {
				stop()
				<-exited
				return res, err
			}
			if stored == 0 {
				continue // until its first chunk (the ticks)
			}
			return end()
		case <-hard:
			return end()
		case werr := <-exited:
			if err := ctx.Err(); err != nil {
				return res, err
			}
			if werr != nil {
				return res, ffmpegFailure("ffmpeg", werr, stderr.String())
			}
			return finish()
		}
	}
}

// ffmpegFailure is the error of an ffmpeg run (what: which run) that
// failed with err and wrote msg: the video's kind of failure
// (video.Classify: truncated, not a video, ...) where ffmpeg's words tell
// it, else err.
func ffmpegFailure(what string, err error, msg string) error {
	if kind := video.Classify(msg); kind != nil {
		return fmt.Errorf("%w (ffmpeg: %s)", kind, msg)
	}
	return fmt.Errorf("media: %s: %w: %s", what, err, msg)
}

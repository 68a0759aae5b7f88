package media

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/video"
)

// prepareCopy is Prepare's remux (o.Copy set): the range's chunks are
// remuxed, proven and stored a window at a time. A window is one ffmpeg
// remux of at most copyBatch chunks (fewer of large frames: windowSize)
// and copyWindowBytes (a seek to the
// window's first keyframe, then exactly its packets: -frames:v), then one
// proof of them (verifyChunks), then their stores, each chunk's file
// removed once stored; the next window is remuxed only after that. So at
// most copyBatch chunks and copyWindowBytes of packets (or one chunk, if
// larger) are ever in dir, whatever the movie's length: the remux, far
// faster than the proof, cannot run ahead of it (before, one remux for the
// whole range, paused only between proofs, copied the rest of the movie
// into dir), and no frame is remuxed that the range does not store. The
// plan knows the movie's end (its packet count): the range that stores the
// last chunk is Done.
func prepareCopy(ctx context.Context, src string, o PrepareOptions, dir string, store func(context.Context, Chunk) error) (Prepared, error) {
	p := o.Copy
	n := p.GOP
	chunks := (p.Frames + n - 1) / n
	res := Prepared{NextFrame: o.FromFrame}
	if p.Frames < 1 {
		return res, video.ErrNoFrames
	}
	first := o.FromFrame / n
	if first >= chunks {
		// The last range ended at the movie's end.
		res.Done = true
		return res, nil
	}
	in, err := video.InputArgs(src)
	if err != nil {
		return res, err
	}
	bin, err := video.FFmpegPath()
	if err != nil {
		return res, err
	}
	// runCtx ends a window at the hard deadline.
	runCtx := ctx
	if !o.HardDeadline.IsZero() {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithDeadline(ctx, o.HardDeadline)
		defer cancel()
	}
	var perChunk time.Duration // a window's remux and proof per chunk, measured
	stored := 0
	for k := first; k < chunks; {
		if (o.MaxChunks > 0 && stored >= o.MaxChunks) ||
			(stored > 0 && !o.Deadline.IsZero() && !time.Now().Before(o.Deadline)) {
			return res, nil // the range is full: the movie goes on
		}
		room := 0
		if o.MaxChunks > 0 {
			room = o.MaxChunks - stored
		}
		began := time.Now()
		batch := p.windowSize(k, chunks, room, o.Deadline, perChunk, began)
		proven, rejected := 0, error(nil)
		err := remuxWindow(runCtx, bin, in, p, dir, k, batch)
		if err == nil {
			proven, rejected = verifyChunks(runCtx, p, dir, k, batch)
		}
		switch {
		case ctx.Err() != nil:
			return res, ctx.Err()
		case runCtx.Err() != nil && stored == 0:
			return res, ErrNoProgress
		case runCtx.Err() != nil:
			return res, nil // the hard deadline: the range ends with what it stored
		case err != nil:
			return res, err
		}
		for i := range proven {
			c := Chunk{Index: k + i, Path: filepath.Join(dir, segmentName(k+i))}
			if err := store(ctx, c); err != nil {
				return res, err
			}
			_ = os.Remove(c.Path)
			stored++
			res.Stored++
			res.Copied++
			res.Width, res.Height = p.Width, p.Height
			res.NextFrame = min((k+i+1)*n, p.Frames)
		}
		if proven < batch {
			return res, rejected
		}
		if err := clearDir(dir); err != nil {
			return res, err
		}
		perChunk = time.Since(began) / time.Duration(batch)
		k += batch
	}
	res.Done = true
	return res, nil
}

// copyWindowBytes bounds a window's packets: a high-rate upload (100
// Mbit/s: 25 MB per 2-second chunk) keeps well inside Lambda's default
// 512 MB /tmp.
const copyWindowBytes = 128 << 20

// A window's proof keeps one decoder per chunk, each holding its frames
// (measured, the proof's peak RSS: 325 MB for 10 chunks of 1080p, 506 MB
// for 16 in the one-hour simulation, 250 MB for 27 of 768x576), so a
// window holds at most copyBatchPixels of frame area: 16 chunks at 1080p,
// 4 at 2160p (16 would need ~2 GB, the function's whole memory), and of
// smaller frames up to copyBatch (768x576: 32, so a 27-chunk movie is one
// window, one remux and one proof, not two of each: a process's start
// costs 0.05-0.09 CPU-s here).
const (
	copyBatch       = 32
	copyBatchPixels = 16 * 1920 * 1080
)

// assumedPixelPace is a window's remux and proof time per pixel of each
// frame before a window of the range has been timed: 10 ns, about 4 times
// this machine's (the proof of 1080p chunks of 60 frames: 0.29 CPU-s a
// chunk, 2.3 ns a pixel), so a range's first window fits its time left on
// a slower or loaded machine (1080p GOP 60: 1.2 s a chunk; the 600-s
// default budget takes a full window, a 5-s one 4 chunks).
const assumedPixelPace = 10 * time.Nanosecond

// windowSize is how many chunks from chunk k (of chunks) the next window
// holds: at most batchChunks, the range's room (0: no limit) and, with a
// deadline, as many as the time left at now proves at pace (a chunk's
// time in the last window; 0: none timed yet, assumedPixelPace), within
// copyWindowBytes (window); at least one.
func (p *CopyPlan) windowSize(k, chunks, room int, deadline time.Time, pace time.Duration, now time.Time) int {
	batch := min(p.batchChunks(), chunks-k)
	if room > 0 {
		batch = min(batch, room)
	}
	if !deadline.IsZero() {
		if pace <= 0 {
			pace = time.Duration(p.GOP) * time.Duration(p.Width) * time.Duration(p.Height) * assumedPixelPace
		}
		if pace > 0 {
			batch = min(batch, int(deadline.Sub(now)/pace))
		}
	}
	return p.window(k, max(batch, 1))
}

// batchChunks is the most chunks of p's frame size one window holds
// (copyBatchPixels, copyBatch).
func (p *CopyPlan) batchChunks() int {
	area := p.Width * p.Height
	if area <= 0 {
		return 1
	}
	return max(1, min(copyBatch, copyBatchPixels/area))
}

// window is how many chunks from chunk k the next window holds: at most
// most, their packets within copyWindowBytes (the plan knows their sizes),
// and at least one.
func (p *CopyPlan) window(k, most int) int {
	var size int64
	for i := range most {
		for _, s := range p.chunkSums(k + i) {
			size += int64(s.size)
		}
		if size > copyWindowBytes {
			return max(i, 1)
		}
	}
	return max(most, 1)
}

// remuxWindow remuxes chunks k, ..., k+count-1 of plan p into dir (named
// segmentName): a seek to chunk k's keyframe, then count*GOP packets, cut
// every GOP packets (closed GOPs: a chunk's packets are contiguous in
// decode order).
func remuxWindow(ctx context.Context, bin string, in []string, p *CopyPlan, dir string, k, count int) error {
	// (The last cut, at the window's end, is never reached: a cut list is
	// never empty.)
	var cuts []string
	for f := p.GOP; f <= count*p.GOP; f += p.GOP {
		cuts = append(cuts, strconv.Itoa(f))
	}
	args := append(copyArgs(p, k*p.GOP, in), "-frames:v", strconv.Itoa(count*p.GOP),
		"-f", "segment", "-segment_start_number", strconv.Itoa(k), "-reset_timestamps", "1", "-segment_format", "mp4",
		"-segment_frames", strings.Join(cuts, ","))
	cmd := exec.CommandContext(ctx, bin, append(args, filepath.Join(dir, "c%09d.mp4"))...)
	stderr := video.NewTail(4096)
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return ffmpegFailure("remux", err, stderr.String())
	}
	return nil
}

// clearDir removes every file in dir (a window's leftovers).
func clearDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, os.Remove(filepath.Join(dir, e.Name())))
	}
	return errors.Join(errs...)
}

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
// remux of at most copyBatch chunks and copyWindowBytes (a seek to the
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
		batch := min(copyBatch, chunks-k)
		if o.MaxChunks > 0 {
			batch = min(batch, o.MaxChunks-stored)
		}
		if !o.Deadline.IsZero() {
			// As many as the time left proves, by the last window's pace.
			fit := 2
			if perChunk > 0 {
				fit = int(time.Until(o.Deadline) / perChunk)
			}
			batch = max(1, min(batch, fit))
		}
		batch = p.window(k, batch)
		began := time.Now()
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

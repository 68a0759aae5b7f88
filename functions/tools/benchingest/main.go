// Command benchingest measures the ingest's rendition (media.PlanRendition
// and media.PrepareRange, the ingest's own code and ffmpeg arguments: a
// remux of an H.264 upload with a fixed closed GOP, else an encoding)
// against plain decoding of the
// same file (`ffmpeg -i f -map 0:v:0 -f null -`), one file at a time: CPU
// (user+system seconds of the child processes, from getrusage, so the
// machine's load does not count), stored bytes against the source's, and
// S3 writes (chunks) against frames. It prints its parameters beside the
// figures. make bench-ingest runs it on real footage (Debian's opencv-doc
// videos) and a generated 1080p30 H.264 clip.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/video"
)

func childCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	budget := flag.Duration("budget", 10*time.Minute, "each range's budget, as INGEST_INVOCATION_SECONDS (default the ingest's; a range with a deadline sizes its remux windows by it); 0: no deadline, one range")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: benchingest [-budget 5s] FILE...")
		os.Exit(2)
	}
	fmt.Printf("| file | codec | rendition | chunk frames | source bytes | frames | decode CPU s | ingest CPU s | x decode | rendition bytes | x source | S3 writes | frames per write | remuxed chunks | ranges | wall s |\n")
	fmt.Printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, f := range flag.Args() {
		if err := bench(context.Background(), f, *budget); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f, err)
			os.Exit(1)
		}
	}
	fmt.Printf("\nParameters: remux (chunk = the upload's GOP, at most %d frames) when the upload allows it, else chunks of %d frames, x264 %s CRF %s (the ingest's); budget per range %v (0: no deadline, one range); CPU = user+system of ffmpeg/ffprobe children (getrusage).\n",
		media.MaxCopyGOP, media.DefaultChunkFrames, media.X264Preset, media.X264CRF, *budget)
}

func bench(ctx context.Context, path string, budget time.Duration) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	ff, err := video.FFmpegPath()
	if err != nil {
		return err
	}
	c0 := childCPU()
	if out, err := exec.CommandContext(ctx, ff, "-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-f", "null", "-").CombinedOutput(); err != nil {
		return fmt.Errorf("decode: %v %s", err, out)
	}
	decode := childCPU() - c0

	c1, began := childCPU(), time.Now()
	info, timing, err := video.ProbeWithTiming(ctx, path)
	if err != nil {
		return err
	}
	plan := media.PlanRendition(ctx, path, info, 0)
	if plan.Reason != "" {
		fmt.Fprintf(os.Stderr, "%s: encoded: %s\n", filepath.Base(path), plan.Reason)
	}
	var bytes int64
	writes, ranges, from, copied := 0, 0, 0, 0
	for {
		ranges++
		o := media.PrepareOptions{FromFrame: from, ExpectedFrames: info.FrameCount, FrameRate: info.FrameRate, Rotation: info.Rotation}
		o.Width, o.Height = media.RenditionSize(info)
		if from > 0 {
			o.Timing = timing
		}
		if budget > 0 {
			o.Deadline = time.Now().Add(budget)
		}
		res, err := media.PrepareRange(ctx, path, plan, o, func(_ context.Context, c media.Chunk) error {
			fi, err := os.Stat(c.Path)
			if err != nil {
				return err
			}
			bytes += fi.Size()
			writes++
			return nil
		})
		if err != nil {
			return err
		}
		copied += res.Copied
		if res.Done {
			from = res.NextFrame
			break
		}
		from = res.NextFrame
	}
	ingest := childCPU() - c1
	wall := time.Since(began)
	fmt.Printf("| %s | %s | %s | %d | %d | %d | %.2f | %.2f | %.2f | %d | %.2f | %d | %.0f | %d | %d | %.1f |\n", filepath.Base(path),
		info.Codec, plan.Rendition(), plan.ChunkFrames, st.Size(), from,
		decode.Seconds(), ingest.Seconds(), ingest.Seconds()/decode.Seconds(), bytes, float64(bytes)/float64(st.Size()),
		writes, float64(from)/float64(writes), copied, ranges, wall.Seconds())
	return nil
}

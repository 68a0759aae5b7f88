// Command benchtracer is `make bench-tracer`: it tracks the same gray
// frames from the same start points with this project's tracker and with
// the OpenCV 4.6 anchors (opencv_track.py, Debian's python3-opencv:
// matchTemplate, PyrLK, CSRT, KCF) in one run, and prints Markdown tables
// with the parameters beside them:
//   - ground truth: clips rendered by functions/testkit/groundtruth,
//     encoded as H.264 MP4 with ffmpeg, error against the true centers;
//   - real footage: the videos Debian's opencv-doc ships (pedestrians, a
//     hand-moved box, a tilting cup, an animation, a tree), by the
//     forward-backward protocol of Kalal et al. 2010 (real.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/movietrace/tracinglocks/functions/internal/tracker"
	"github.com/movietrace/tracinglocks/functions/testkit/groundtruth"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

func main() {
	width := flag.Int("width", 640, "ground-truth clip width")
	height := flag.Int("height", 360, "ground-truth clip height")
	frames := flag.Int("frames", 300, "frames per ground-truth clip")
	python := flag.String("python", "/usr/bin/python3", "Python 3 with cv2 (Debian's python3-opencv)")
	out := flag.String("out", "testoutput/bench-tracer", "where the clips and results go")
	repeat := flag.Int("repeat", 3, "runs per tracker and clip (the best frames per CPU-second is kept)")
	only := flag.String("only", "", "run only this ground-truth condition (clean, fast-blur, rotate-noise-drift, occlusion)")
	real := flag.String("real", defaultRealDir, "folder of the real clips (Debian's opencv-doc: make bench-tracer-deps); empty: none")
	realFrames := flag.String("real-frames", "50,150", "forward-backward lengths on the real clips")
	points := flag.Int("points", 16, "points per real clip")
	visp := flag.String("visp", defaultVispDir, "folder of ViSP's images (Debian's visp-images-data: make bench-tracer-deps) for the real clips cube and mire; empty: without them")
	realClipsFlag := flag.String("real-clips", "", "run only these real clips, comma-separated (vtest, box, cup, megamind, tree, cube, mire); empty: all")
	tune := flag.String("tune-clips", "box,megamind", "the real clips this tracker's checks were tuned on: totals are also printed for them and for the others (held out)")
	fresh := flag.String("fresh-clips", "cube,mire", "held-out real clips no change of this tracker was looked at on: their totals are also printed apart")
	dump := flag.String("dump", "", "write every real point's outcome per tracker and clip to this file (JSON lines)")
	gt := flag.Bool("gt", true, "run the ground-truth clips")
	only2 := flag.String("anchors", "template,lk,lk-plain,csrt,kcf", "the OpenCV anchors to run (template, lk, lk-plain, csrt, kcf)")
	flag.Float64Var(&tracker.DefaultParams.KeyConfidence, "key-confidence", tracker.DefaultParams.KeyConfidence, "this tracker's KeyConfidence (for tuning)")
	flag.Float64Var(&tracker.DefaultParams.FBError, "fb-error", tracker.DefaultParams.FBError, "this tracker's FBError (for tuning)")
	flag.Float64Var(&tracker.DefaultParams.ReacquireConfidence, "reacquire", tracker.DefaultParams.ReacquireConfidence, "this tracker's ReacquireConfidence (for tuning)")
	flag.Parse()
	anchors = slices.DeleteFunc(anchors, func(a anchor) bool { return !slices.Contains(strings.Split(*only2, ","), a.method) })
	if *only != "" {
		groundtruth.Conditions = []string{*only}
	}
	o := opencv{python: *python, out: *out}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	script, err := scriptPath()
	if err != nil {
		fail(err)
	}
	o.script = script
	fmt.Printf("## Tracker benchmark (make bench-tracer)\n\nThis tracker: %s; GOMAXPROCS=%d, %d cores shared with other work.\n",
		tracker.DefaultParams, runtime.GOMAXPROCS(0), runtime.NumCPU())
	if *gt {
		if err := runGroundTruth(o, *width, *height, *frames, max(*repeat, 1)); err != nil {
			fail(err)
		}
	}
	if *real != "" {
		var lengths []int
		for _, s := range strings.Split(*realFrames, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 2 {
				fail(fmt.Errorf("-real-frames %q: want lengths of at least 2", *realFrames))
			}
			lengths = append(lengths, n)
		}
		rr := realRun{dir: *real, visp: *visp, lengths: lengths, points: *points, tune: splitList(*tune), fresh: splitList(*fresh), clips: splitList(*realClipsFlag), dump: *dump}
		if err := runReal(o, rr); err != nil {
			fail(err)
		}
	}
}

// splitList is a comma-separated flag's items (none for "").
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench-tracer:", err)
	os.Exit(1)
}

func runGroundTruth(o opencv, w, h, frames, repeat int) error {
	ctx := context.Background()
	p := tracker.DefaultParams
	fmt.Printf("\n### Ground truth\n\nClips: %dx%d, %d frames at 25 fps, H.264 (libx264 CRF 18, yuv420p), decoded once by ffmpeg to gray (video.ReadFrames); every tracker gets the same gray frames. Targets: textured discs of radius %d px on a textured background, 3 per clip.\n",
		w, h, frames, groundtruth.TargetRadius)
	var rows, params []string
	for _, cond := range groundtruth.Conditions {
		s, err := groundtruth.New(cond, w, h, frames)
		if err != nil {
			return err
		}
		mp4 := filepath.Join(o.out, cond+".mp4")
		if err := videotest.Encode(ctx, mp4, videotest.Options{Width: w, Height: h, FrameRate: 25, Frames: frames, Codec: videotest.H264}, s.Render); err != nil {
			return err
		}
		c, err := decode(ctx, mp4, cond, o.out, frames)
		if err != nil {
			return err
		}
		truth := make([][]groundtruth.Truth, frames)
		for i := range truth {
			truth[i] = s.Truth(i)
		}
		starts := make([][2]float64, len(truth[0]))
		for k, t := range truth[0] {
			starts[k] = [2]float64{t.X, t.Y}
		}
		// Each tracker runs `repeat` times, interleaved, and keeps its best
		// frames per CPU-second. Tracking is deterministic, so the points
		// are the first run's.
		results := make([]result, 1+len(anchors))
		for rep := range repeat {
			ours, err := trackOurs(c.frames, c.w, c.h, p, starts, false)
			if err != nil {
				return fmt.Errorf("%s: %w", cond, err)
			}
			got := []result{ours}
			for _, a := range anchors {
				r, ps, err := o.track(ctx, c, len(c.frames), a.method, a.name, starts, p, false)
				if err != nil {
					return err
				}
				got = append(got, r)
				if !slices.Contains(params, ps) {
					params = append(params, ps)
				}
			}
			for i, r := range got {
				if rep == 0 {
					results[i] = r
				}
				results[i].cpu = min(results[i].cpu, r.cpu)
			}
		}
		fmt.Printf("- %s: %s\n", cond, s.Description)
		for _, r := range results {
			m := measure(r, truth)
			rows = append(rows, fmt.Sprintf("| %s | %s | %.3f | %.3f | %.1f%% | %d | %d (%d) | %s | %.0f |",
				cond, r.name, m.mean, m.p95, 100*m.within2, m.lostVisible, m.hiddenReported, m.invented, m.reacquire, float64(frames-1)/r.cpu))
		}
	}
	for _, ps := range params {
		fmt.Printf("- OpenCV: %s\n", ps)
	}
	fmt.Printf("\nError: distance to the true center over points reported while the target is less than half hidden. "+
		"Within 2 px: of all target-frames less than half hidden (a lost point counts as a miss). "+
		"Lost while visible: no point although the target is wholly visible. Occluded: points reported while at least 3/4 of the target is hidden, and in brackets those of them more than 2 px from the true center (invented). "+
		"Re-acquired: frames from the target being less than 1/4 hidden again to its first point within 2 px of the truth (occlusion clip). "+
		"Frames per CPU-second: tracked frames over the CPU time of tracking alone (all threads; decoding excluded), best of %d interleaved runs.\n\n", repeat)
	fmt.Println("| clip | tracker | mean err (px) | p95 err (px) | within 2 px | lost while visible | reported while occluded (invented) | re-acquired after | frames per CPU-s |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Println(r)
	}
	return nil
}

type metrics struct {
	mean, p95, within2    float64
	lostVisible, invented int
	hiddenReported        int
	reacquire             string
}

func measure(r result, truth [][]groundtruth.Truth) metrics {
	var errs []float64
	var m metrics
	halfVisible, good := 0, 0
	for f, row := range truth {
		for k, t := range row {
			var pt *[2]float64
			if f < len(r.points) && k < len(r.points[f]) {
				pt = r.points[f][k]
			}
			if t.Covered >= 0.75 {
				if pt != nil {
					m.hiddenReported++
					if math.Hypot(pt[0]-t.X, pt[1]-t.Y) > 2 {
						m.invented++
					}
				}
				continue
			}
			if pt == nil {
				if t.Covered == 0 {
					m.lostVisible++
				}
				if t.Covered < 0.5 {
					halfVisible++
				}
				continue
			}
			if t.Covered < 0.5 {
				e := math.Hypot(pt[0]-t.X, pt[1]-t.Y)
				errs = append(errs, e)
				halfVisible++
				if e <= 2 {
					good++
				}
			}
		}
	}
	m.reacquire = reacquisition(r, truth)
	if len(errs) > 0 {
		slices.Sort(errs)
		var sum float64
		for _, e := range errs {
			sum += e
		}
		m.mean = sum / float64(len(errs))
		m.p95 = errs[min(len(errs)*95/100, len(errs)-1)]
	}
	if halfVisible > 0 {
		m.within2 = float64(good) / float64(halfVisible)
	}
	return m
}

// reacquisition is the worst re-acquisition over every occlusion of every
// target: frames from the target being less than 1/4 hidden again to its
// first point within 2 px of the truth ("never" if none before the next
// occlusion or the clip's end; "-" without occlusions).
func reacquisition(r result, truth [][]groundtruth.Truth) string {
	worst, episodes := 0, 0
	near := func(f, k int) bool {
		if f >= len(r.points) || k >= len(r.points[f]) || r.points[f][k] == nil {
			return false
		}
		p, t := r.points[f][k], truth[f][k]
		return math.Hypot(p[0]-t.X, p[1]-t.Y) <= 2
	}
	for k := range truth[0] {
		for f := 0; f < len(truth); f++ {
			if truth[f][k].Covered < 0.75 {
				continue
			}
			for f < len(truth) && truth[f][k].Covered >= 0.25 {
				f++ // to the first frame less than a quarter hidden
			}
			if f >= len(truth) {
				break
			}
			episodes++
			visible, found := f, false
			for ; f < len(truth) && truth[f][k].Covered < 0.75; f++ {
				if near(f, k) {
					worst, found = max(worst, f-visible), true
					break
				}
			}
			if !found {
				return "never"
			}
		}
	}
	if episodes == 0 {
		return "-"
	}
	return fmt.Sprintf("%d frames", worst)
}

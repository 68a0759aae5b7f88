// Command benchtracer is `make bench-tracer`: it renders the ground-truth
// clips (functions/testkit/groundtruth), encodes them as H.264 MP4
// with ffmpeg, tracks them with this project's tracker (decoding through
// video.ReadFrames) and with the OpenCV anchors (opencv_track.py, Debian's
// python3-opencv) from the same start points, and prints one Markdown
// table with the parameters beside it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/tracker"
	"github.com/movietrace/tracinglocks/functions/internal/video"
	"github.com/movietrace/tracinglocks/functions/testkit/groundtruth"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

func main() {
	width := flag.Int("width", 640, "clip width")
	height := flag.Int("height", 360, "clip height")
	frames := flag.Int("frames", 300, "frames per clip")
	python := flag.String("python", "/usr/bin/python3", "Python 3 with cv2 (Debian's python3-opencv)")
	out := flag.String("out", "testoutput/bench-tracer", "where the clips and results go")
	repeat := flag.Int("repeat", 3, "runs per tracker and clip (the best fps is kept)")
	only := flag.String("only", "", "run only this condition (clean, fast-blur, rotate-noise-drift, occlusion)")
	flag.Parse()
	if *only != "" {
		groundtruth.Conditions = []string{*only}
	}
	if err := run(*width, *height, *frames, max(*repeat, 1), *python, *out); err != nil {
		fmt.Fprintln(os.Stderr, "bench-tracer:", err)
		os.Exit(1)
	}
}

// result is one tracker's points on one clip: per frame, per marker, a
// position or nil (lost).
type result struct {
	name   string
	points [][]*[2]float64
	fps    float64
}

func run(w, h, frames, repeat int, python, out string) error {
	ctx := context.Background()
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	script, err := scriptPath()
	if err != nil {
		return err
	}
	p := tracker.DefaultParams
	fmt.Printf("## Tracer accuracy (make bench-tracer)\n\n")
	fmt.Printf("Clips: %dx%d, %d frames at 25 fps, H.264 (libx264 CRF 18, yuv420p), targets: textured discs of radius %d px on a textured background, 3 per clip.\n",
		w, h, frames, groundtruth.TargetRadius)
	fmt.Printf("This tracker: %s; sub-pixel: quadratic fit + Lucas-Kanade; decoding: ffmpeg -> gray pipe (video.ReadFrames, frame size and count from the movie row, no probe; the ffmpeg process start is included); GOMAXPROCS=%d.\n",
		p, runtime.GOMAXPROCS(0))
	var rows []string
	var params []string
	for _, cond := range groundtruth.Conditions {
		s, err := groundtruth.New(cond, w, h, frames)
		if err != nil {
			return err
		}
		clip := filepath.Join(out, cond+".mp4")
		if err := videotest.Encode(ctx, clip, videotest.Options{Width: w, Height: h, FrameRate: 25, Frames: frames, Codec: videotest.H264}, s.Render); err != nil {
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
		// fps: on a shared machine the slowest runs measure the neighbours.
		// Tracking is deterministic, so the points are the first run's.
		results := make([]result, 3)
		for rep := range repeat {
			ours, err := trackOurs(ctx, clip, w, h, frames, p, starts)
			if err != nil {
				return fmt.Errorf("%s: %w", cond, err)
			}
			got := []result{ours}
			for _, method := range []string{"template", "lk"} {
				r, ps, err := trackOpenCV(ctx, python, script, clip, out, cond, method, starts, p)
				if err != nil {
					return fmt.Errorf("%s, OpenCV %s: %w", cond, method, err)
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
				results[i].fps = max(results[i].fps, r.fps)
			}
		}
		fmt.Printf("- %s: %s\n", cond, s.Description)
		for _, r := range results {
			m := measure(r, truth)
			rows = append(rows, fmt.Sprintf("| %s | %s | %.3f | %.3f | %.1f%% | %d | %d (%d) | %s | %.0f |",
				cond, r.name, m.mean, m.p95, 100*m.within2, m.lostVisible, m.hiddenReported, m.invented, m.reacquire, r.fps))
		}
	}
	for _, ps := range params {
		fmt.Printf("- OpenCV: %s\n", ps)
	}
	fmt.Printf("\nError: distance to the true center over points reported while the target is less than half hidden. "+
		"Within 2 px: of all target-frames less than half hidden (a lost point counts as a miss). "+
		"Lost while visible: no point although the target is wholly visible. Occluded: points reported while at least 3/4 of the target is hidden, and in brackets those of them more than 2 px from the true center (invented). "+
		"Re-acquired: frames from the target being less than 1/4 hidden again to its first point within 2 px of the truth (occlusion clip). fps: frames per second, decoding included, best of %d interleaved runs, on %d cores shared with other work.\n\n", repeat, runtime.NumCPU())
	fmt.Println("| clip | tracker | mean err (px) | p95 err (px) | within 2 px | lost while visible | reported while occluded (invented) | re-acquired after | fps |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Println(r)
	}
	fmt.Printf("\nPeak Go heap while this tracker ran (sampled every 10 frames, whole process): %.1f MiB; ffmpeg decodes in its own process.\n",
		float64(peakHeap)/(1<<20))
	return nil
}

// peakHeap is the largest Go heap seen while this tracker ran.
var peakHeap uint64

func trackOurs(ctx context.Context, clip string, w, h, frames int, p tracker.Params, starts [][2]float64) (result, error) {
	r := result{name: "this tracker"}
	// The frame size and count come from the movie row (the ingest probed
	// the file once), as in the product: no probe here.
	begin := time.Now()
	var trk *tracker.Tracker
	err := video.ReadFrames(ctx, clip, video.ReadOptions{End: frames, Width: w, Height: h}, func(f video.Frame) error {
		var pts []tracker.Point
		var err error
		if trk == nil {
			trk, pts, err = tracker.New(p, f.Gray, f.Width, f.Height, starts)
		} else {
			pts, err = trk.Step(f.Gray)
		}
		if err != nil {
			return err
		}
		row := make([]*[2]float64, len(pts))
		for k, pt := range pts {
			if !pt.Lost {
				row[k] = &[2]float64{pt.X, pt.Y}
			}
		}
		r.points = append(r.points, row)
		if len(r.points)%10 == 0 {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peakHeap = max(peakHeap, ms.HeapAlloc)
		}
		return nil
	})
	r.fps = float64(len(r.points)) / time.Since(begin).Seconds()
	return r, err
}

func trackOpenCV(ctx context.Context, python, script, clip, out, cond, method string, starts [][2]float64, p tracker.Params) (result, string, error) {
	startsPath := filepath.Join(out, cond+"-starts.json")
	data, _ := json.Marshal(starts)
	if err := os.WriteFile(startsPath, data, 0o644); err != nil {
		return result{}, "", err
	}
	cmd := exec.CommandContext(ctx, python, script, clip, startsPath, method,
		fmt.Sprint(p.TemplateRadius), fmt.Sprint(p.SearchRadius), fmt.Sprint(p.MinConfidence))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return result{}, "", fmt.Errorf("%w: %s", err, stderr.String())
	}
	var res struct {
		Points [][]*[2]float64 `json:"points"`
		FPS    float64         `json:"fps"`
		Params string          `json:"params"`
	}
	if err := json.Unmarshal(stdout, &res); err != nil {
		return result{}, "", err
	}
	name := map[string]string{"template": "OpenCV matchTemplate", "lk": "OpenCV PyrLK"}[method]
	return result{name: name, points: res.Points, fps: res.FPS}, res.Params, nil
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

// scriptPath finds opencv_track.py next to this source file (the command
// runs from the repository root under make).
func scriptPath() (string, error) {
	p := filepath.Join("functions", "tools", "benchtracer", "opencv_track.py")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("run from the repository root (make bench-tracer): %w", err)
	}
	return p, nil
}

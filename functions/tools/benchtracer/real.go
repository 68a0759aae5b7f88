package main

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/movietrace/tracinglocks/functions/internal/tracker"
)

// defaultRealDir is where Debian's opencv-doc puts its sample videos.
const defaultRealDir = "/usr/share/doc/opencv-doc"

// defaultVispDir is where Debian's visp-images-data puts ViSP's data set
// (Inria's camera sequences for its trackers' tests and tutorials).
const defaultVispDir = "/usr/share/visp-images-data/ViSP-images"

// The packages the real clips come from (make bench-tracer-deps installs
// both).
const (
	opencvDoc = "opencv-doc"
	vispData  = "visp-images-data"
)

// realClips are the real videos the bench tracks, filmed or drawn by
// others: opencv-doc's (OpenCV's samples and tutorial videos) and two
// image sequences of visp-images-data (ffmpeg reads a numbered sequence by
// its %04d pattern), each relative to its package's folder; .gz ones are
// unpacked into the output folder first.
var realClips = []struct {
	pkg, name, path, what string
	skip                  int // leading frames skipped (black)
}{
	{opencvDoc, "vtest", "examples/data/vtest.avi", "pedestrians on a square, fixed camera, 768x576 MPEG-4", 0},
	{opencvDoc, "box", "opencv4/html/box.mp4.gz", "a box moved by hand over a desk, 640x480 H.264", 0},
	{opencvDoc, "cup", "opencv4/html/cup.mp4.gz", "a cup tilted by hand, 640x480 H.264", 0},
	{opencvDoc, "megamind", "examples/data/Megamind.avi", "an animated film, 720x528 MPEG-4, from frame 2 (frames 0-1 are black)", 2},
	{opencvDoc, "tree", "examples/data/tree.avi", "a tree filmed from a moving camera, 320x240 Cinepak", 0},
	{vispData, "cube", "mbt/cube/image%04d.pgm", "ViSP: a textured cube on a desk, hand-held camera moving round it, a hand passing, 640x480 PGM sequence (218 frames)", 0},
	{vispData, "mire", "mire-2/image.%04d.pgm", "ViSP: a dotted target before posters, hand-held camera, 384x288 PGM sequence (501 frames)", 0},
}

// fbTolerance is the forward-backward error (px) below which a point
// counts as correct (Kalal et al. 2010 use a few pixels).
const fbTolerance = 3.0

// fbOutcome is one point's forward-backward verdict.
type fbOutcome struct {
	Lost      bool    `json:"lost"`      // no point at the forward end or back on the first frame
	Uncertain bool    `json:"uncertain"` // reported at the forward end with the uncertain flag
	Err       float64 `json:"err"`       // forward-backward error, px (when not lost)
	Conf      float64 `json:"conf"`      // this tracker's confidence at the forward end
}

// fb tracks forward over frames [0, n) and back from where each point
// ended, and returns each point's outcome and the CPU seconds of both runs.
func fb(fwd func(back bool, starts [][2]float64) (result, error), starts [][2]float64) ([]fbOutcome, float64, error) {
	out := make([]fbOutcome, len(starts))
	f, err := fwd(false, starts)
	if err != nil {
		return nil, 0, err
	}
	end := f.points[len(f.points)-1]
	var backStarts [][2]float64
	var idx []int
	for k, pt := range end {
		if pt == nil {
			out[k].Lost = true
			continue
		}
		if f.uncertain != nil {
			out[k].Uncertain = f.uncertain[len(f.uncertain)-1][k]
			out[k].Conf = f.conf[len(f.conf)-1][k]
		}
		backStarts = append(backStarts, *pt)
		idx = append(idx, k)
	}
	cpu := f.cpu
	if len(backStarts) > 0 {
		b, err := fwd(true, backStarts)
		if err != nil {
			return nil, 0, err
		}
		cpu += b.cpu
		for j, pt := range b.points[len(b.points)-1] {
			k := idx[j]
			if pt == nil {
				out[k].Lost = true
				continue
			}
			out[k].Err = math.Hypot(pt[0]-starts[k][0], pt[1]-starts[k][1])
		}
	}
	return out, cpu, nil
}

type fbTally struct {
	points, covered, lost, uncertain, silent int
	frames                                   int
	cpu                                      float64
}

func (t *fbTally) add(o []fbOutcome, frames int, cpu float64) {
	for _, p := range o {
		t.points++
		switch {
		case p.Lost:
			t.lost++
		case p.Uncertain:
			t.uncertain++
		case p.Err < fbTolerance:
			t.covered++
		default:
			t.silent++
		}
	}
	t.frames += frames
	t.cpu += cpu
}

func (t fbTally) row(clip string, n int, name string) string {
	pc := func(v int) string { return fmt.Sprintf("%.0f%%", 100*float64(v)/float64(max(t.points, 1))) }
	return fmt.Sprintf("| %s | %d | %s | %d | %s | %s | %s | %s | %.0f |", clip, n, name, t.points,
		pc(t.covered), pc(t.lost), pc(t.uncertain), pc(t.silent), float64(t.frames)/t.cpu)
}

// realRun selects the real clips and how the totals are split.
type realRun struct {
	dir     string // opencv-doc's folder
	visp    string // visp-images-data's ViSP-images folder (empty: its clips are skipped)
	lengths []int
	points  int
	clips   []string // only these clips (empty: all)
	tune    []string // the clips parameters may be tuned on: the others are held out
	fresh   []string // held-out clips no session has looked at while changing the tracker (totals of their own)
	dump    string   // a file for every point's outcome as JSON lines (empty: none)
}

// dumpRow is one tracker's outcomes on one clip, for -dump.
type dumpRow struct {
	Clip     string      `json:"clip"`
	N        int         `json:"n"`
	Tracker  string      `json:"tracker"`
	Outcomes []fbOutcome `json:"outcomes"`
}

func runReal(o opencv, rr realRun) error {
	dir, lengths, npoints := rr.dir, rr.lengths, rr.points
	var dump *json.Encoder
	if rr.dump != "" {
		f, err := os.Create(rr.dump)
		if err != nil {
			return err
		}
		defer f.Close()
		dump = json.NewEncoder(f)
	}
	ctx := context.Background()
	p := tracker.DefaultParams
	longest := slices.Max(lengths)
	fmt.Printf("\n### Real footage, forward-backward (Kalal et al. 2010)\n\nClips: the videos Debian's opencv-doc ships (%s) and two camera sequences of Debian's visp-images-data (%s), decoded once by ffmpeg to gray; the first %d frames of each.\n", dir, rr.visp, longest)
	var clips []*clip
	var starts [][][2]float64
	for _, rc := range realClips {
		if len(rr.clips) > 0 && !slices.Contains(rr.clips, rc.name) {
			continue
		}
		root := dir
		if rc.pkg == vispData {
			if rr.visp == "" {
				continue
			}
			root = rr.visp
		}
		src := filepath.Join(root, rc.path)
		if strings.HasSuffix(src, ".gz") {
			dst := filepath.Join(o.out, strings.TrimSuffix(filepath.Base(src), ".gz"))
			if err := gunzip(src, dst); err != nil {
				return fmt.Errorf("%w (make bench-tracer-deps installs %s)", err, rc.pkg)
			}
			src = dst
		}
		c, err := decodeAny(ctx, src, rc.name, o.out, rc.skip, longest+1)
		if err != nil {
			return fmt.Errorf("%w (make bench-tracer-deps installs %s)", err, rc.pkg)
		}
		if len(c.frames) < longest+1 {
			return fmt.Errorf("%s has %d frames, want %d", rc.name, len(c.frames), longest+1)
		}
		st, err := features(ctx, o, c, npoints, 2*p.TemplateRadius+10, p.TemplateRadius+p.SearchRadius)
		if err != nil {
			return err
		}
		fmt.Printf("- %s: %s, %d points\n", rc.name, rc.what, len(st))
		clips, starts = append(clips, c), append(starts, st)
	}
	fmt.Printf("- Points: the %d strongest Shi-Tomasi corners of each clip's first frame (features.py), at least %d px apart and %d px inside the frame.\n",
		npoints, 2*p.TemplateRadius+10, p.TemplateRadius+p.SearchRadius)
	fmt.Printf("- Each tracker tracks each point forward over N frames, then backward from where it ended to the first frame; the forward-backward error is the distance from the start point.\n")
	fmt.Printf("- covered: reported at the end with an error < %.0f px; lost: not reported at either end; uncertain: reported with this tracker's uncertain flag (never counted as covered or silent); silent: reported, not flagged, error >= %.0f px (confidently wrong).\n", fbTolerance, fbTolerance)
	fmt.Printf("- frames per CPU-s: tracked frames (forward and back) over the CPU time of tracking alone, all threads.\n\n")
	fmt.Println("| clip | N | tracker | points | covered | lost | uncertain | silent | frames per CPU-s |")
	fmt.Println("|---|---:|---|---:|---:|---:|---:|---:|---:|")
	var ourOutcomes []fbOutcome
	var totals []string
	var params []string
	for _, n := range lengths {
		names := []string{"this tracker"}
		for _, a := range anchors {
			names = append(names, a.name)
		}
		sum := make([]fbTally, len(names))
		tuned := make([]fbTally, len(names))
		held := make([]fbTally, len(names))
		fresh := make([]fbTally, len(names))
		for ci, c := range clips {
			for ti, name := range names {
				run := func(back bool, st [][2]float64) (result, error) {
					frames := c.frames[:n+1]
					if ti == 0 {
						return trackOurs(frames, c.w, c.h, p, st, back)
					}
					r, ps, err := o.track(ctx, c, n+1, anchors[ti-1].method, name, st, p, back)
					if err == nil && !slices.Contains(params, ps) {
						params = append(params, ps)
					}
					return r, err
				}
				out, cpu, err := fb(run, starts[ci])
				if err != nil {
					return err
				}
				var t fbTally
				t.add(out, 2*n, cpu)
				sum[ti].add(out, 2*n, cpu)
				if slices.Contains(rr.tune, c.name) {
					tuned[ti].add(out, 2*n, cpu)
				} else {
					held[ti].add(out, 2*n, cpu)
				}
				if slices.Contains(rr.fresh, c.name) {
					fresh[ti].add(out, 2*n, cpu)
				}
				fmt.Println(t.row(c.name, n, name))
				if dump != nil {
					if err := dump.Encode(dumpRow{c.name, n, name, out}); err != nil {
						return err
					}
				}
				if ti == 0 && n == longest {
					ourOutcomes = append(ourOutcomes, out...)
				}
			}
		}
		for ti, name := range names {
			totals = append(totals, sum[ti].row("**all**", n, name))
		}
		if len(rr.tune) > 0 {
			for ti, name := range names {
				if tuned[ti].points > 0 {
					totals = append(totals, tuned[ti].row("tuning clips", n, name))
				}
			}
			for ti, name := range names {
				if held[ti].points > 0 {
					totals = append(totals, held[ti].row("**held-out clips**", n, name))
				}
			}
		}
		for ti, name := range names {
			if fresh[ti].points > 0 {
				totals = append(totals, fresh[ti].row("**fresh held-out clips**", n, name))
			}
		}
	}
	for _, t := range totals {
		fmt.Println(t)
	}
	if len(rr.tune) > 0 {
		fmt.Printf("\nTuning clips (parameters and checks were chosen looking at these only): %s; every other clip is held out.\n", strings.Join(rr.tune, ", "))
	}
	if len(rr.fresh) > 0 {
		fmt.Printf("Fresh held-out clips (added to judge a change once, never looked at while changing the tracker): %s.\n", strings.Join(rr.fresh, ", "))
	}
	fmt.Println()
	for _, ps := range params {
		fmt.Printf("- OpenCV: %s\n", ps)
	}
	fmt.Printf("\nDoes this tracker's confidence predict a correct point? Over %d frames, of the points it reports at the forward end (uncertain ones included) with confidence >= c, the share with forward-backward error < %.0f px:\n\n",
		longest, fbTolerance)
	fmt.Println("| confidence >= | points | correct | precision | of them not flagged | correct | precision |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|")
	for _, c := range []float64{0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95} {
		all, good, sure, sureGood := 0, 0, 0, 0
		for _, oc := range ourOutcomes {
			if !oc.Lost && oc.Conf >= c {
				all++
				ok := oc.Err < fbTolerance
				if ok {
					good++
				}
				if !oc.Uncertain {
					sure++
					if ok {
						sureGood++
					}
				}
			}
		}
		fmt.Printf("| %.2f | %d | %d | %.0f%% | %d | %d | %.0f%% |\n", c, all, good, 100*float64(good)/float64(max(all, 1)),
			sure, sureGood, 100*float64(sureGood)/float64(max(sure, 1)))
	}
	var flagged, flaggedGood, sure, sureGood int
	for _, oc := range ourOutcomes {
		if oc.Lost {
			continue
		}
		if oc.Uncertain {
			flagged++
			if oc.Err < fbTolerance {
				flaggedGood++
			}
		} else {
			sure++
			if oc.Err < fbTolerance {
				sureGood++
			}
		}
	}
	fmt.Printf("\nNot flagged: %d points, %d correct; flagged uncertain: %d points, %d correct.\n", sure, sureGood, flagged, flaggedGood)
	return nil
}

func features(ctx context.Context, o opencv, c *clip, n, dist, border int) ([][2]float64, error) {
	script := filepath.Join(filepath.Dir(o.script), "features.py")
	cmd := exec.CommandContext(ctx, o.python, script, c.raw, fmt.Sprint(c.w), fmt.Sprint(c.h), fmt.Sprint(n), fmt.Sprint(dist), fmt.Sprint(border))
	cmd.Stderr = os.Stderr
	data, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: features: %w", c.name, err)
	}
	var pts [][2]float64
	return pts, json.Unmarshal(data, &pts)
}

// decodeAny decodes the first n frames of src with ffmpeg straight to gray
// (the product's reader refuses some of these codecs, msmpeg4v3, cinepak).
func decodeAny(ctx context.Context, src, name, out string, skip, n int) (*clip, error) {
	probe, err := exec.CommandContext(ctx, "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0", src).Output()
	if err != nil {
		return nil, fmt.Errorf("%s: ffprobe: %w", src, err)
	}
	c := &clip{name: name, raw: filepath.Join(out, name+".gray")}
	if _, err := fmt.Sscanf(strings.TrimSpace(string(probe)), "%d,%d", &c.w, &c.h); err != nil {
		return nil, fmt.Errorf("%s: ffprobe said %q", src, probe)
	}
	data, err := exec.CommandContext(ctx, "ffmpeg", "-v", "error", "-i", src, "-frames:v", fmt.Sprint(skip+n), "-f", "rawvideo", "-pix_fmt", "gray", "-").Output()
	if err != nil {
		return nil, fmt.Errorf("%s: ffmpeg: %w", src, err)
	}
	size := c.w * c.h
	data = data[min(skip*size, len(data)):]
	for i := 0; i+size <= len(data); i += size {
		c.frames = append(c.frames, data[i:i+size])
	}
	return c, os.WriteFile(c.raw, data[:len(c.frames)*size], 0o644)
}

func gunzip(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, zr); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

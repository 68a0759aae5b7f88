package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/movietrace/tracinglocks/functions/internal/tracker"
	"github.com/movietrace/tracinglocks/functions/internal/video"
)

// clip is one movie decoded once to gray frames (ffmpeg, video.ReadFrames),
// kept in memory for this tracker and written raw for the OpenCV anchors,
// so every tracker sees the very same bytes.
type clip struct {
	name   string
	w, h   int
	frames [][]byte
	raw    string // the frames' raw file
}

// decode reads the first n frames of src (n 0: all) at its own size.
func decode(ctx context.Context, src, name, out string, n int) (*clip, error) {
	c := &clip{name: name, raw: filepath.Join(out, name+".gray")}
	err := video.ReadFrames(ctx, src, video.ReadOptions{End: n}, func(f video.Frame) error {
		c.w, c.h = f.Width, f.Height
		c.frames = append(c.frames, bytes.Clone(f.Gray))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	return c, os.WriteFile(c.raw, bytes.Join(c.frames, nil), 0o644)
}

// result is one tracker's points on one run: per frame, per marker, a
// position or nil (lost), and for this tracker the confidence and the
// uncertain flag of each point.
type result struct {
	name      string
	points    [][]*[2]float64
	conf      [][]float64
	uncertain [][]bool
	cpu       float64 // CPU seconds of tracking alone
}

// cpuSeconds is this process's user+system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// trackOurs tracks frames (reversed when back) from starts with this
// tracker.
func trackOurs(frames [][]byte, w, h int, p tracker.Params, starts [][2]float64, back bool) (result, error) {
	if back {
		frames = slices.Clone(frames)
		slices.Reverse(frames)
	}
	r := result{name: "this tracker"}
	begin := cpuSeconds()
	trk, pts, err := tracker.New(p, frames[0], w, h, starts)
	if err != nil {
		return r, err
	}
	for f := 0; ; f++ {
		row := make([]*[2]float64, len(pts))
		conf := make([]float64, len(pts))
		unc := make([]bool, len(pts))
		for k, pt := range pts {
			if !pt.Lost {
				row[k] = &[2]float64{pt.X, pt.Y}
			}
			conf[k], unc[k] = pt.Confidence, pt.Uncertain()
		}
		r.points, r.conf, r.uncertain = append(r.points, row), append(r.conf, conf), append(r.uncertain, unc)
		if f+1 == len(frames) {
			break
		}
		if pts, err = trk.Step(frames[f+1]); err != nil {
			return r, err
		}
	}
	r.cpu = cpuSeconds() - begin
	return r, nil
}

type anchor struct{ method, name string }

// anchors are the OpenCV methods of opencv_track.py, by row name.
var anchors = []anchor{
	{"template", "OpenCV matchTemplate"},
	{"lk", "OpenCV PyrLK + FB check"},
	{"lk-plain", "OpenCV PyrLK plain"},
	{"csrt", "OpenCV CSRT"},
	{"kcf", "OpenCV KCF"},
}

type opencv struct{ python, script, out string }

// track runs one OpenCV method over the first n frames of c (reversed
// when back) and returns its points and the parameters it printed.
func (o opencv) track(ctx context.Context, c *clip, n int, method, name string, starts [][2]float64, p tracker.Params, back bool) (result, string, error) {
	startsPath := filepath.Join(o.out, c.name+"-starts.json")
	data, _ := json.Marshal(starts)
	if err := os.WriteFile(startsPath, data, 0o644); err != nil {
		return result{}, "", err
	}
	raw := c.raw
	if n < len(c.frames) {
		raw = filepath.Join(o.out, fmt.Sprintf("%s-%d.gray", c.name, n))
		if err := os.WriteFile(raw, bytes.Join(c.frames[:n], nil), 0o644); err != nil {
			return result{}, "", err
		}
	}
	args := []string{o.script, raw, fmt.Sprint(c.w), fmt.Sprint(c.h), fmt.Sprint(n), startsPath, method,
		fmt.Sprint(p.TemplateRadius), fmt.Sprint(p.SearchRadius), fmt.Sprint(p.MinConfidence)}
	if back {
		args = append(args, "reverse")
	}
	cmd := exec.CommandContext(ctx, o.python, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return result{}, "", fmt.Errorf("%s %s: %w: %s", c.name, method, err, stderr.String())
	}
	var res struct {
		Points [][]*[2]float64 `json:"points"`
		CPU    float64         `json:"cpu"`
		Params string          `json:"params"`
	}
	if err := json.Unmarshal(stdout, &res); err != nil {
		return result{}, "", err
	}
	return result{name: name, points: res.Points, cpu: res.CPU}, res.Params, nil
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

package video

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"time"
)

// Timing is what a seek needs to know of a source: its constant frame rate
// and when its first video frame is shown, in seconds after the file's
// start (ffmpeg's -ss counts from there). The zero Timing means "do not
// seek".
type Timing struct {
	Rate   float64
	Offset float64
}

// ProbeTiming reads src's headers only (no packet is counted or decoded)
// and returns its first video stream's timing if its rate is constant (the
// stream's r_frame_rate, the least rate that represents every timestamp,
// equals its average rate) and its container is indexed (SeekableFormat).
// Otherwise it returns the zero Timing and no error; the reader then
// counts frames from 0.
func ProbeTiming(ctx context.Context, src string) (Timing, error) {
	in, err := input(src)
	if err != nil {
		return Timing{}, err
	}
	bin, err := ffprobePath()
	if err != nil {
		return Timing{}, err
	}
	args := append([]string{"-v", "error", "-print_format", "json", "-show_entries",
		"format=format_name,start_time:stream=r_frame_rate,avg_frame_rate,start_time:stream_disposition=attached_pic", "-select_streams", "v"}, in...)
	cmd := exec.CommandContext(ctx, bin, args...)
	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	if err != nil {
		return Timing{}, fmt.Errorf("video: ffprobe timing: %w: %s", err, stderr.String())
	}
	return parseTiming(out)
}

func parseTiming(data []byte) (Timing, error) {
	var p struct {
		Streams []struct {
			RFrameRate   string `json:"r_frame_rate"`
			AvgFrameRate string `json:"avg_frame_rate"`
			StartTime    string `json:"start_time"`
			Disposition  struct {
				AttachedPic int `json:"attached_pic"`
			} `json:"disposition"`
		} `json:"streams"`
		Format struct {
			FormatName string `json:"format_name"`
			StartTime  string `json:"start_time"`
		} `json:"format"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return Timing{}, fmt.Errorf("video: ffprobe timing output: %w", err)
	}
	if !SeekableFormat(p.Format.FormatName) {
		return Timing{}, nil
	}
	for _, s := range p.Streams {
		if s.Disposition.AttachedPic != 0 {
			continue
		}
		r, rok := ratio(s.RFrameRate)
		avg, aok := ratio(s.AvgFrameRate)
		if !rok || !aok || math.Abs(r-avg) > 1e-9*r {
			return Timing{}, nil
		}
		start, sok := startSeconds(s.StartTime)
		fileStart, fok := startSeconds(p.Format.StartTime)
		if !sok || !fok || start < fileStart {
			return Timing{}, nil
		}
		return Timing{Rate: r, Offset: start - fileStart}, nil
	}
	return Timing{}, nil
}

// startSeconds parses a start time (which, unlike a duration, may be 0).
func startSeconds(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < -1e6 || v > 1e9 {
		return 0, false
	}
	return v, true
}

// SeekableFormat reports whether a container (ffprobe's format_name) keeps
// an index of its frames' timestamps, so that a seek by time lands on the
// frame that decoding from the start would number so: MP4/MOV and
// Matroska/WebM. Anything else (MPEG-TS and MPEG-PS, whose timestamps may
// restart where two recordings were joined; AVI, whose index may be
// missing; raw streams) is read from frame 0, discarding.
func SeekableFormat(name string) bool {
	switch name {
	case "mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm":
		return true
	}
	return false
}

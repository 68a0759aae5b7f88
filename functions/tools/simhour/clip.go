package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// The simulated movie: 1080p30 H.264 at a camera's constant bit rate
// (8 Mbit/s), testsrc2's moving pattern with temporal noise over it (as a
// sensor's grain: every frame differs everywhere, so neither encoder nor
// decoder sees flat areas). Generating and encoding an hour of it would cost
// more CPU than the simulation itself, so one unit of at most unitSeconds is
// encoded and the clip is that unit repeated (`-f concat -c copy`: the
// packets are the unit's, so each copy costs the ingest what the first
// does). Two kinds:
//
//   - copy: as a camera writes it, a keyframe every 60 frames, closed GOPs,
//     B-frames: the ingest remuxes it (video.rendition "copy");
//   - x264: x264's default keyframe placement (at most 250 frames apart,
//     scene cuts): an irregular GOP longer than media.MaxCopyGOP, so the
//     ingest decodes and encodes it (video.rendition "x264").
const (
	unitSeconds = 60
	clipFilter  = "testsrc2=size=1920x1080:rate=30,noise=alls=8:allf=t"
)

var clipEncoders = map[string][]string{
	"copy": {"-c:v", "libx264", "-preset", "veryfast", "-b:v", "8M", "-maxrate", "8M", "-bufsize", "16M", "-pix_fmt", "yuv420p",
		"-bf", "3", "-g", "60", "-keyint_min", "60", "-sc_threshold", "0"},
	"x264": {"-c:v", "libx264", "-preset", "veryfast", "-b:v", "8M", "-maxrate", "8M", "-bufsize", "16M", "-pix_fmt", "yuv420p"},
}

// clipCommand describes how the clip is made, for the report.
func clipCommand(kind string) string {
	return "ffmpeg -f lavfi -i " + clipFilter + " -t " + strconv.Itoa(unitSeconds) + " " + strings.Join(clipEncoders[kind], " ") +
		" unit.mp4, repeated with -f concat -c copy"
}

// makeClip returns the path of a minutes-long clip of kind under dir,
// generating it (and its unit) when absent.
func makeClip(ctx context.Context, dir, kind string, minutes int) (string, error) {
	enc, ok := clipEncoders[kind]
	if !ok || minutes < 1 {
		return "", fmt.Errorf("clip: kind %q (copy or x264), %d minutes", kind, minutes)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, fmt.Sprintf("sim-%s-%dm.mp4", kind, minutes))
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	unit := filepath.Join(dir, fmt.Sprintf("unit-%s-%ds.mp4", kind, unitSeconds))
	if _, err := os.Stat(unit); err != nil {
		fmt.Printf("sim-hour: encoding the %d-second %s unit (a few CPU-minutes) ...\n", unitSeconds, kind)
		part := unit + ".part.mp4"
		args := append([]string{"-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", clipFilter, "-t", strconv.Itoa(unitSeconds)}, enc...)
		if err := ffmpeg(ctx, append(args, part)...); err != nil {
			return "", err
		}
		if err := os.Rename(part, unit); err != nil {
			return "", err
		}
	}
	var list strings.Builder
	for range minutes * 60 / unitSeconds {
		fmt.Fprintf(&list, "file '%s'\n", filepath.Base(unit))
	}
	listPath := filepath.Join(dir, fmt.Sprintf("sim-%s-%dm.txt", kind, minutes))
	if err := os.WriteFile(listPath, []byte(list.String()), 0o644); err != nil {
		return "", err
	}
	part := out + ".part.mp4"
	if err := ffmpeg(ctx, "-nostdin", "-v", "error", "-y", "-f", "concat", "-safe", "0", "-i", listPath, "-c", "copy", part); err != nil {
		return "", err
	}
	return out, os.Rename(part, out)
}

func ffmpeg(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "nice", append([]string{"-n", "10", "ffmpeg"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ffmpeg %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Command smoke-browser runs the browser smoke walk (package smoke) against
// a page: `make smoke-deployed ENV=dev` against the deployed one.
//
//	go run ./functions/tools/smoke/cmd/smoke-browser -url https://d123.cloudfront.net/ -username smoke@yourdomain -password ...
//	go run ./functions/tools/smoke/cmd/smoke-browser -url http://127.0.0.1:8080/ -login alice
//
// The password may come from SMOKE_PASSWORD instead of the command line.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/tools/smoke"
)

func main() {
	var o smoke.Options
	flag.StringVar(&o.URL, "url", "", "the page's URL")
	flag.StringVar(&o.Login, "login", "", "local OIDC provider's test user (alice, bob)")
	flag.StringVar(&o.Username, "username", "", "Cognito user (managed login)")
	flag.StringVar(&o.MovieID, "movie", "", "movie to trace (default: its own, a generated clip added from the page, traced, renamed and deleted)")
	clipMB := flag.Int("clip-mb", 100, "size of its own clip in MB (uploaded in parts when larger than the API's part size); 0: a 2 s 320x240 clip of about 0.1 MB")
	flag.StringVar(&o.Out, "out", "", "directory for a screenshot per step")
	flag.DurationVar(&o.TraceTimeout, "trace-timeout", 10*time.Minute, "how long the trace may take")
	flag.Parse()
	o.Password = os.Getenv(envvar.SmokePassword)
	o.Log = func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if o.Out != "" {
		if err := os.MkdirAll(o.Out, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if o.MovieID == "" {
		clip, err := ownClip(ctx, *clipMB)
		if err != nil {
			fmt.Fprintln(os.Stderr, "smoke: its own clip:", err)
			os.Exit(1)
		}
		o.Clip = clip
	}
	if err := smoke.Walk(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "smoke: the browser path passed")
}

// ownClip encodes the walk's own movie with ffmpeg: without a size, 2 s of
// its test pattern at 25 frames per second, 320x240, H.264 (what a camera
// gives); with mb, a clip of about mb MB that is cheap to make and to
// ingest: 160x120 at a constant 50 Mbit/s (x264 pads with filler data), so
// its frames are few and small (100 MB: 16 s, 400 frames).
func ownClip(ctx context.Context, mb int) ([]byte, error) {
	dir, err := os.MkdirTemp("", "smoke-clip-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "smoke.mp4")
	bin := os.Getenv(envvar.FFmpeg)
	if bin == "" {
		bin = "ffmpeg"
	}
	args := []string{"-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=2",
		"-c:v", "libx264", "-pix_fmt", "yuv420p", "-movflags", "+faststart", out}
	if mb > 0 {
		seconds := float64(mb) * 8 / 50 // MB at 50 Mbit/s
		args = []string{"-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-t", fmt.Sprintf("%.2f", seconds),
			"-c:v", "libx264", "-preset", "ultrafast", "-b:v", "50M", "-minrate", "50M", "-maxrate", "50M", "-bufsize", "1M",
			"-x264-params", "nal-hrd=cbr:filler=1", "-pix_fmt", "yuv420p", "-threads", "1", out}
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, b)
	}
	return os.ReadFile(out)
}

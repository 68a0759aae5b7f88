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
	flag.StringVar(&o.MovieID, "movie", "", "movie to trace (default: its own, a generated 2 s clip added, traced and deleted)")
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
		clip, err := ownClip(ctx)
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

// ownClip encodes the walk's own movie with ffmpeg: 2 s of its test pattern
// at 25 frames per second, 320x240, H.264 (what a camera gives).
func ownClip(ctx context.Context) ([]byte, error) {
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
	cmd := exec.CommandContext(ctx, bin, "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=2",
		"-c:v", "libx264", "-pix_fmt", "yuv420p", "-movflags", "+faststart", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, b)
	}
	return os.ReadFile(out)
}

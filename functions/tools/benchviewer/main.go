// Command benchviewer measures how fast the Analyze page shows the next
// frame: the local stack in-process (sample clips ingested as by make run),
// headless Chromium on the page, and N presses of "next frame" on a sample
// movie. For each press it times, in the page, from the click to the first
// animation frame whose canvas shows the real frame image (a gray pixel:
// the page's stand-in drawing is coloured). It runs the steps twice: cold
// (frames this browser never fetched: API redirect, S3, PNG decode, which
// the page starts a few frames ahead of the one shown) and warm (the same
// frames again: the page keeps only the last few decoded, so most come
// from the browser's HTTP cache, the redirect cached for minutes and the
// image as immutable). It is a benchmark, not a test: it prints the
// figures and asserts nothing.
//
//	make bench-viewer                      # under withemulators
//	go run ./functions/tools/benchviewer -movie mouse-open-field -steps 150
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/local/emulators"
	"github.com/movietrace/tracinglocks/functions/local/stack"
)

func main() {
	movie := flag.String("movie", "mouse-open-field", "the sample movie to step through")
	steps := flag.Int("steps", 150, "next-frame presses per pass")
	chromium := flag.String("chromium", "/usr/bin/chromium", "the browser")
	upload := flag.String("upload", "", "upload this movie file first (as make import does) and step through it instead")
	flag.Parse()
	if err := run(*movie, *steps, *chromium, *upload); err != nil {
		fmt.Fprintln(os.Stderr, "bench-viewer:", err)
		os.Exit(1)
	}
}

func run(movie string, steps int, chromium, upload string) error {
	ddb, sqs, s3 := os.Getenv(envvar.DynamoDBEndpoint), os.Getenv(envvar.SQSEndpoint), os.Getenv(envvar.S3Endpoint)
	if ddb == "" || sqs == "" {
		return fmt.Errorf("DYNAMODB_ENDPOINT and SQS_ENDPOINT are not set: run it with make bench-viewer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	samples := filepath.Join(os.TempDir(), "tracinglocks-samples")
	if dir, err := emulators.ToolsDir(); err == nil {
		samples = filepath.Join(dir, "samples")
	}
	st, err := stack.Start(ctx, stack.Options{DynamoDBEndpoint: ddb, SQSEndpoint: sqs, S3Endpoint: s3,
		Prefix: fmt.Sprintf("benchviewer-%d", time.Now().UnixNano()), SampleDir: samples,
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer st.Stop()
	if upload != "" {
		if movie, err = uploadFile(ctx, st, upload); err != nil {
			return err
		}
	}

	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(must(os.MkdirTemp("", "benchviewer-profile-"))), chromedp.WindowSize(1280, 1000))
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	if err := chromedp.Do(bctx,
		chromedp.Navigate(st.URL),
		chromedp.WaitVisible(chromedp.ID("identity-name")),
		chromedp.SetValue(chromedp.ID("identity-name"), "Bench"),
		chromedp.Click(chromedp.ID("identity-use")),
		chromedp.Navigate(st.URL+"#/movies/"+movie),
		chromedp.WaitVisible(chromedp.ID("next-frame")),
	); err != nil {
		return fmt.Errorf("open the movie: %w", err)
	}
	// Wait for frame 0's image.
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](grayJS, chromedp.WithPollingTimeout(time.Minute))); err != nil {
		return fmt.Errorf("frame 0 never showed its image: %w", err)
	}
	fmt.Printf("bench-viewer: %s, %d next-frame presses per pass, headless Chromium, local stack at %s\n", movie, steps, st.URL)
	for _, pass := range []string{"cold", "warm"} {
		if pass == "warm" {
			if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`(() => {
				const s = document.querySelector('#frame-slider'); s.value = 0; s.dispatchEvent(new Event('input')); return true; })()`)); err != nil {
				return err
			}
			time.Sleep(500 * time.Millisecond)
		}
		var lat []float64
		for range steps {
			ms, err := chromedp.Run(bctx, chromedp.Evaluate[float64](stepJS, chromedp.EvalAwaitPromise))
			if err != nil {
				return fmt.Errorf("%s step: %w", pass, err)
			}
			lat = append(lat, ms)
		}
		slices.Sort(lat)
		q := func(p float64) float64 { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
		fmt.Printf("bench-viewer: %s next-frame display: p50 %.1f ms  p95 %.1f ms  max %.1f ms  (n=%d)\n",
			pass, q(0.50), q(0.95), lat[len(lat)-1], len(lat))
	}
	return nil
}

// grayJS: the canvas centre is gray (r == g == b): a frame image, not the
// coloured stand-in the page draws while the image loads.
const grayJS = `(() => { const d = document.querySelector('#player').getContext('2d').getImageData(320, 180, 1, 1).data;
	return d[0] === d[1] && d[1] === d[2]; })()`

// stepJS clicks "next frame" and resolves with the milliseconds until the
// first animation frame that shows the image.
const stepJS = `new Promise((resolve, reject) => {
	const t0 = performance.now();
	document.querySelector('#next-frame').click();
	const check = () => {
		const d = document.querySelector('#player').getContext('2d').getImageData(320, 180, 1, 1).data;
		if (d[0] === d[1] && d[1] === d[2]) { resolve(performance.now() - t0); return; }
		if (performance.now() - t0 > 10000) { reject(new Error('no image after 10 s')); return; }
		requestAnimationFrame(check);
	};
	requestAnimationFrame(check);
})`

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// uploadFile puts a file through POST /movies and the presigned PUT, and
// waits for its ingest.
func uploadFile(ctx context.Context, st *stack.Stack, path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	body, _ := json.Marshal(map[string]any{"title": filepath.Base(path), "fileName": filepath.Base(path), "contentType": "video/mp4", "sizeBytes": len(data)})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, st.URL+"movies", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Dev-User", "dev-bench")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	var created struct {
		Movie  struct{ ID string } `json:"movie"`
		Upload struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"upload"`
	}
	err = json.NewDecoder(res.Body).Decode(&created)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("POST /movies: %s %v", res.Status, err)
	}
	put, _ := http.NewRequestWithContext(ctx, http.MethodPut, created.Upload.URL, bytes.NewReader(data))
	for k, v := range created.Upload.Headers {
		put.Header.Set(k, v)
	}
	if res, err = http.DefaultClient.Do(put); err != nil {
		return "", err
	}
	res.Body.Close()
	began := time.Now()
	for {
		m, err := st.Movies.Get(ctx, created.Movie.ID)
		if err != nil {
			return "", err
		}
		if m.Status != "awaiting_upload" {
			fmt.Printf("bench-viewer: %s ingested in %s: %s, %d frames, %dx%d\n", path, time.Since(began).Round(100*time.Millisecond),
				m.Status, m.FrameCount, m.Video.Width, m.Video.Height)
			return created.Movie.ID, nil
		}
		time.Sleep(250 * time.Millisecond)
	}
}

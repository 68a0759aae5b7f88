// Command benchviewer measures how fast the Analyze page shows a frame: the
// local stack in-process (sample clips ingested as by make run, or a file
// uploaded first), headless Chromium on the page, N presses of "next frame"
// and N jumps to random frames of a movie. For each it times, in the page,
// from the click (or the slider's input) to the first animation frame whose
// canvas shows that frame's own image (the canvas says which frame's image
// it drew: data-source="image" and data-shown="<n>"; while an image loads
// the page keeps the previous one, data-source="previous"). Next-frame runs
// twice: cold (frames this browser never fetched: the API's JPEG of the
// frame, decoded from its chunk, which the page starts a few frames ahead
// of the one shown) and warm (the same frames again: the page keeps only
// the last few decoded, so most come from the browser's HTTP cache, the
// image being immutable). It is a benchmark, not a test: it prints the
// figures and asserts nothing.
//
//	make bench-viewer                      # under withemulators
//	go run ./functions/tools/benchviewer -movie mouse-open-field -steps 150
//	BENCH_VIEWER_FLAGS='-upload clip1080.mp4 -steps 100 -jumps 50' make bench-viewer
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
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
	jumps := flag.Int("jumps", 50, "jumps to a random frame")
	seed := flag.Int64("seed", 1, "the random jumps' seed")
	flag.Parse()
	if err := run(*movie, *steps, *jumps, *seed, *chromium, *upload); err != nil {
		fmt.Fprintln(os.Stderr, "bench-viewer:", err)
		os.Exit(1)
	}
}

func run(movie string, steps, jumps int, seed int64, chromium, upload string) error {
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
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](shownJS(0), chromedp.WithPollingTimeout(time.Minute))); err != nil {
		return fmt.Errorf("frame 0 never showed its image: %w", err)
	}
	size, err := chromedp.Run(bctx, chromedp.Evaluate[string](`(() => { const c = document.querySelector('#player');
		return c.width + 'x' + c.height + ' canvas px for a ' + document.querySelector('#movie-info').textContent; })()`))
	if err != nil {
		return err
	}
	frames, err := chromedp.Run(bctx, chromedp.Evaluate[int](`+document.querySelector('#frame-slider').max + 1`))
	if err != nil {
		return err
	}
	fmt.Printf("bench-viewer: %s (%d frames; %s), %d next-frame presses per pass, %d random jumps (seed %d), headless Chromium, local stack at %s\n",
		movie, frames, size, steps, jumps, seed, st.URL)
	// report prints the quantiles; a display that never came within 30 s
	// counts as +Inf (so it shows in p95 and max when it matters).
	report := func(what string, lat []float64) {
		if len(lat) == 0 {
			return
		}
		late := 0
		for i, v := range lat {
			if v < 0 {
				lat[i] = math.Inf(1)
				late++
			}
		}
		slices.Sort(lat)
		if late > 0 {
			what += fmt.Sprintf(", %d of %d not shown within 30 s", late, len(lat))
		}
		q := func(p float64) float64 { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
		fmt.Printf("bench-viewer: %s: p50 %.1f ms  p95 %.1f ms  max %.1f ms  (n=%d)\n", what, q(0.50), q(0.95), lat[len(lat)-1], len(lat))
	}
	for _, pass := range []string{"cold", "warm"} {
		if pass == "warm" {
			if _, err := chromedp.Run(bctx, chromedp.Evaluate[float64](fmt.Sprintf(jumpJS, 0), chromedp.EvalAwaitPromise)); err != nil {
				return err
			}
		}
		var lat []float64
		for range min(steps, frames-1) {
			ms, err := chromedp.Run(bctx, chromedp.Evaluate[float64](stepJS, chromedp.EvalAwaitPromise))
			if err != nil {
				return fmt.Errorf("%s step: %w", pass, err)
			}
			lat = append(lat, ms)
		}
		report(pass+" next-frame display", lat)
	}
	rnd := rand.New(rand.NewPCG(uint64(seed), 0))
	var lat []float64
	for range jumps {
		ms, err := chromedp.Run(bctx, chromedp.Evaluate[float64](fmt.Sprintf(jumpJS, rnd.IntN(frames)), chromedp.EvalAwaitPromise))
		if err != nil {
			return fmt.Errorf("jump: %w", err)
		}
		lat = append(lat, ms)
	}
	report("random-jump display", lat)
	if late, err := chromedp.Run(bctx, chromedp.Evaluate[string](`(window.benchLate || []).join(' ')`)); err == nil && late != "" {
		fmt.Printf("bench-viewer: not shown within 30 s (frame:what the canvas showed): %s\n", late)
	}
	return nil
}

// shownJS: the canvas shows frame n's own image.
func shownJS(n int) string {
	return fmt.Sprintf(`(() => { const c = document.querySelector('#player'); return c.dataset.source === 'image' && c.dataset.shown === '%d'; })()`, n)
}

// waitShown is the page-side wait: resolve with the milliseconds from t0
// until the first animation frame whose canvas shows frame n's image, or
// -1 when it has not after 30 s.
const waitShown = `const check = () => {
		const c = document.querySelector('#player');
		if (c.dataset.source === 'image' && c.dataset.shown === String(n)) { resolve(performance.now() - t0); return; }
		if (performance.now() - t0 > 30000) { (window.benchLate = window.benchLate || []).push(n + ':' + c.dataset.source); resolve(-1); return; }
		requestAnimationFrame(check);
	};
	requestAnimationFrame(check);`

// stepJS clicks "next frame" and resolves with the milliseconds until the
// next frame's image shows.
const stepJS = `new Promise((resolve, reject) => {
	const n = +document.querySelector('#frame-label').textContent + 1;
	const t0 = performance.now();
	document.querySelector('#next-frame').click();
	` + waitShown + `
})`

// jumpJS moves the slider to frame %d and resolves with the milliseconds
// until its image shows.
const jumpJS = `new Promise((resolve, reject) => {
	const n = %d, s = document.querySelector('#frame-slider');
	const t0 = performance.now();
	s.value = n; s.dispatchEvent(new Event('input'));
	` + waitShown + `
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

// Command benchviewer measures how fast the Analyze page shows a frame: the
// local stack in-process (sample clips ingested as by make run, or a file
// uploaded first), headless Chromium on the page, N presses of "next frame"
// and N jumps to random frames of a movie. For each it times, in the page,
// from the click (or the slider's input) to the first animation frame whose
// canvas shows that frame's own image (the canvas says which frame's image
// it drew: data-source="image" and data-shown="<n>"; while an image loads
// the page keeps the previous one, data-source="previous").
//
// Next-frame runs one cold pass per -pauses entry, each on frames this
// browser never fetched (pass i from frame i*steps), the pause being the
// time between an image showing and the next press (0: back to back, as
// fast as the page can go; 200: five presses a second, a person stepping
// with the arrow key), then a warm pass back to back over the first pass's
// frames (the page keeps only the last few decoded, so most come from the
// browser's HTTP cache, the image being immutable). Jumps go to random
// frames away from any frame fetched before (cold for the browser). Beside
// each figure it prints the parameters (movie, resolution, rendition, chunk
// size, pause, load average) and a profile: the share of presses whose
// image was already decoded when pressed, the server's time for the
// image (the API's Server-Timing), the time the click's own handler took
// (state, render and draw). It is a benchmark, not a test: it prints the
// figures and asserts nothing.
//
//	make bench-viewer                      # under withemulators
//	go run ./functions/tools/benchviewer -movie mouse-open-field -steps 150
//	BENCH_VIEWER_FLAGS='-upload clip1080.mp4 -steps 100 -jumps 30 -pauses 0,200' make bench-viewer
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
	"strconv"
	"strings"
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
	pauses := flag.String("pauses", "0,200", "milliseconds between an image showing and the next press, one cold pass each")
	softComp := flag.Bool("software-compositing", false, "composite in software (--disable-gpu-compositing) instead of headless Chromium's emulated GPU (SwiftShader)")
	source := flag.String("frame-source", "chunks", "chunks: the page decodes frames from the movie's chunks (WebCodecs); images: it fetches the server's JPEG of each frame")
	flag.Parse()
	var ps []int
	for _, f := range strings.Split(*pauses, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 0 {
			fmt.Fprintln(os.Stderr, "bench-viewer: -pauses is a list of milliseconds")
			os.Exit(2)
		}
		ps = append(ps, v)
	}
	if *source != "chunks" && *source != "images" {
		fmt.Fprintln(os.Stderr, "bench-viewer: -frame-source is chunks or images")
		os.Exit(2)
	}
	if err := run(*movie, *steps, *jumps, *seed, *chromium, *upload, ps, *softComp, *source); err != nil {
		fmt.Fprintln(os.Stderr, "bench-viewer:", err)
		os.Exit(1)
	}
}

func run(movie string, steps, jumps int, seed int64, chromium, upload string, pauses []int, softComp bool, source string) error {
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
		chromedp.UserDataDir(must(os.MkdirTemp("", "benchviewer-profile-"))), chromedp.WindowSize(1280, 1000),
		chromedp.Flag("disable-gpu-compositing", softComp))
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	if err := chromedp.Do(bctx,
		chromedp.Navigate(st.URL),
		chromedp.WaitVisible(chromedp.ID("identity-name")),
		chromedp.SetValue(chromedp.ID("identity-name"), "Bench"),
		chromedp.Click(chromedp.ID("identity-use")),
		chromedp.Evaluate[chromedp.Void](`localStorage.setItem('tracinglocks.frameSource', '`+source+`')`),
		chromedp.Navigate(st.URL+"#/movies/"+movie),
		chromedp.WaitVisible(chromedp.ID("next-frame")),
	); err != nil {
		return fmt.Errorf("open the movie: %w", err)
	}
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[any](`performance.setResourceTimingBufferSize(1000000)`)); err != nil {
		return err
	}
	// Wait for frame 0's image.
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](shownJS(0), chromedp.WithPollingTimeout(time.Minute))); err != nil {
		return fmt.Errorf("frame 0 never showed its image: %w", err)
	}
	size, err := chromedp.Run(bctx, chromedp.Evaluate[string](`(() => { const c = document.querySelector('#player');
		return c.width + 'x' + c.height + ' canvas px for a ' + document.querySelector('#movie-info').textContent + '; frames from ' + c.dataset.frameSource; })()`))
	if err != nil {
		return err
	}
	frames, err := chromedp.Run(bctx, chromedp.Evaluate[int](`+document.querySelector('#frame-slider').max + 1`))
	if err != nil {
		return err
	}
	row, err := st.Movies.Get(ctx, movie)
	if err != nil {
		return err
	}
	rendition := "no video"
	if v := row.Video; v != nil {
		rendition = fmt.Sprintf("%dx%d, rendition %q, chunks of %d frames", v.Width, v.Height, v.Rendition, v.ChunkFrames)
	}
	fmt.Printf("bench-viewer: %s (%d frames; %s; %s), %d next-frame presses per pass, pauses %v ms, %d random jumps (seed %d), headless Chromium (no GPU; compositing %s), local stack at %s, load average %s\n",
		movie, frames, rendition, size, steps, pauses, jumps, seed, map[bool]string{false: "on the emulated GPU (SwiftShader)", true: "in software"}[softComp], st.URL, loadAverage())
	for i, pause := range pauses {
		from := i * steps
		if from+steps >= frames {
			return fmt.Errorf("%d frames are too few for %d passes of %d steps", frames, len(pauses), steps)
		}
		if err := step(bctx, fmt.Sprintf("cold, pause %d ms", pause), from, steps, pause); err != nil {
			return err
		}
	}
	if err := step(bctx, "warm, pause 0 ms", 0, steps, 0); err != nil {
		return err
	}
	if err := jump(bctx, frames, jumps, seed); err != nil {
		return err
	}
	if d, err := chromedp.Run(bctx, chromedp.Evaluate[[]float64](drawJS, chromedp.EvalAwaitPromise)); err == nil && len(d) > 0 {
		p50, p95, _ := quantiles(d)
		fmt.Printf("bench-viewer: profile: the page's draw of the shown frame (views/player.js draw, %d times): p50 %.1f p95 %.1f ms\n", len(d), p50, p95)
	}
	if late, err := chromedp.Run(bctx, chromedp.Evaluate[string](`(window.benchLate || []).join(' ')`)); err == nil && late != "" {
		fmt.Printf("bench-viewer: not shown within 30 s (frame:what the canvas showed): %s\n", late)
	}
	fmt.Printf("bench-viewer: load average at the end %s\n", loadAverage())
	return nil
}

// loadAverage is the machine's 1, 5 and 15 minute load averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// measure is one press or jump as the page saw it.
type measure struct {
	Ms      float64 `json:"ms"`      // to the first animation frame showing the image (-1: not within 30 s)
	Handler float64 `json:"handler"` // the click's own handler (state, render, draw)
	Ready   bool    `json:"ready"`   // the frame was decoded before the press
	Server  float64 `json:"server"`  // the API's Server-Timing for the image (-1: none, from the HTTP cache)
	Bytes   int     `json:"bytes"`   // the image's transfer size
}

// step goes to frame from, waits for its image and pause, then presses
// "next frame" steps times, waiting pause after each image shows.
func step(bctx context.Context, what string, from, steps, pause int) error {
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[measure](fmt.Sprintf(jumpJS, from), chromedp.EvalAwaitPromise)); err != nil {
		return err
	}
	var ms []measure
	before := cpuNow()
	for range steps {
		time.Sleep(time.Duration(pause) * time.Millisecond)
		m, err := chromedp.Run(bctx, chromedp.Evaluate[measure](stepJS, chromedp.EvalAwaitPromise))
		if err != nil {
			return fmt.Errorf("%s step: %w", what, err)
		}
		ms = append(ms, m)
	}
	report(what+" next-frame display", ms)
	cpuNow().since(before, steps)
	return nil
}

// jump moves the slider to n random frames, each at least 30 frames from
// any frame fetched before (as far as the movie allows).
func jump(bctx context.Context, frames, n int, seed int64) error {
	fetched, err := chromedp.Run(bctx, chromedp.Evaluate[[]int](`performance.getEntriesByType('resource')
		.map((e) => /\/frames\/(\d+)\/image$/.exec(e.name)).filter((m) => m).map((m) => +m[1])`))
	if err != nil {
		return err
	}
	rnd := rand.New(rand.NewPCG(uint64(seed), 0))
	var ms []measure
	before := cpuNow()
	for range n {
		target := rnd.IntN(frames)
		for try := 0; try < 1000 && slices.ContainsFunc(fetched, func(f int) bool { return f > target-30 && f < target+30 }); try++ {
			target = rnd.IntN(frames)
		}
		m, err := chromedp.Run(bctx, chromedp.Evaluate[measure](fmt.Sprintf(jumpJS, target), chromedp.EvalAwaitPromise))
		if err != nil {
			return fmt.Errorf("jump: %w", err)
		}
		ms = append(ms, m)
		fetched = append(fetched, target)
	}
	report("random-jump display (frames never fetched before)", ms)
	cpuNow().since(before, n)
	return nil
}

// report prints the quantiles and the profile; a display that never came
// within 30 s counts as +Inf (so it shows in p95 and max when it matters).
func report(what string, ms []measure) {
	if len(ms) == 0 {
		return
	}
	var lat, handler, server []float64
	late, ready, bytes := 0, 0, 0
	for _, m := range ms {
		v := m.Ms
		if v < 0 {
			v = math.Inf(1)
			late++
		}
		lat = append(lat, v)
		handler = append(handler, m.Handler)
		if m.Ready {
			ready++
		}
		if m.Server >= 0 && m.Bytes > 0 { // not from the HTTP cache
			server = append(server, m.Server)
			bytes += m.Bytes
		}
	}
	if late > 0 {
		what += fmt.Sprintf(", %d of %d not shown within 30 s", late, len(lat))
	}
	p50, p95, top := quantiles(lat)
	fmt.Printf("bench-viewer: %s: p50 %.1f ms  p95 %.1f ms  max %.1f ms  (n=%d)\n", what, p50, p95, top, len(lat))
	h50, h95, _ := quantiles(handler)
	line := fmt.Sprintf("bench-viewer:   profile: %d of %d decoded before the press; click handler p50 %.1f p95 %.1f ms",
		ready, len(ms), h50, h95)
	if len(server) > 0 {
		s50, s95, _ := quantiles(server)
		line += fmt.Sprintf("; %d images from the server: server time p50 %.1f p95 %.1f ms, %d kB each on average",
			len(server), s50, s95, bytes/len(server)/1000)
	}
	fmt.Println(line)
}

func quantiles(v []float64) (p50, p95, top float64) {
	v = slices.Clone(v)
	slices.Sort(v)
	q := func(p float64) float64 { return v[min(len(v)-1, int(p*float64(len(v))))] }
	return q(0.50), q(0.95), v[len(v)-1]
}

// shownJS: the canvas shows frame n's own image.
func shownJS(n int) string {
	return fmt.Sprintf(`(() => { const c = document.querySelector('#player'); return c.dataset.source === 'image' && c.dataset.shown === '%d'; })()`, n)
}

// waitShown is the page-side wait: resolve with the milliseconds from t0
// until the first animation frame after the canvas shows frame n's image
// (-1 when it has not after 30 s), the handler's time (t1 - t0), whether the
// frame was decoded before (ready) and the image's server timing and size.
const waitShown = `const c = document.querySelector('#player');
	const done = (ms) => {
		const e = performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/frames/' + n + '/image')).pop();
		const st = e && e.serverTiming && e.serverTiming.find((t) => t.name === 'image');
		resolve({ ms, handler: t1 - t0, ready, server: st ? st.duration : -1, bytes: e ? e.transferSize : 0 });
	};
	const shown = () => c.dataset.source === 'image' && c.dataset.shown === String(n);
	// Watch the canvas's attributes (no polling: an animation-frame loop would
	// keep Chromium drawing frames and cost the CPU measured), then wait for
	// the animation frame that shows it.
	const paint = () => requestAnimationFrame(() => done(performance.now() - t0));
	if (shown()) { paint(); } else {
		const late = setTimeout(() => { mo.disconnect(); (window.benchLate = window.benchLate || []).push(n + ':' + c.dataset.source); done(-1); }, 30000);
		const mo = new MutationObserver(() => { if (shown()) { mo.disconnect(); clearTimeout(late); paint(); } });
		mo.observe(c, { attributes: true, attributeFilter: ['data-shown', 'data-source'] });
	}`

// stepJS clicks "next frame" and resolves when the next frame's image
// shows (waitShown).
const stepJS = `new Promise((resolve, reject) => {
	const n = +document.querySelector('#frame-label').textContent + 1;
	const ready = +(document.querySelector('#player').dataset.readyAhead || 0) >= 1;
	const t0 = performance.now();
	document.querySelector('#next-frame').click();
	const t1 = performance.now();
	` + waitShown + `
})`

// jumpJS moves the slider to frame %d and resolves when its image shows
// (waitShown).
const jumpJS = `new Promise((resolve, reject) => {
	const n = %d, s = document.querySelector('#frame-slider');
	const ready = false;
	const t0 = performance.now();
	s.value = n; s.dispatchEvent(new Event('input'));
	const t1 = performance.now();
	` + waitShown + `
})`

// drawJS times the page's own draw of the shown frame, 30 times.
const drawJS = `import('/views/player.js').then((m) => {
	const out = [];
	for (let i = 0; i < 30; i++) { const t = performance.now(); m.draw(); out.push(performance.now() - t); }
	return out;
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

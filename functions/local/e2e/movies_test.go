package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/video"
	"github.com/movietrace/tracinglocks/functions/local/stack"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// The clip of the movies test: a bright square that moves 5 px a frame over
// a dark background, so every frame is told apart by where the square is.
const (
	clipW, clipH, clipFrames, clipFPS = 320, 240, 48, 24
	squareSide                        = 40
)

func squareX(frame int) int { return 10 + 5*frame }

func writeClip(t *testing.T) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "square.mp4")
	err := videotest.Encode(t.Context(), path, videotest.Options{Width: clipW, Height: clipH, FrameRate: clipFPS, Frames: clipFrames,
		Codec: videotest.H264, Extra: []string{"-movflags", "+faststart"}}, func(i int, g []byte) {
		for p := range g {
			g[p] = 30
		}
		for y := 100; y < 100+squareSide; y++ {
			for x := squareX(i); x < squareX(i)+squareSide; x++ {
				g[y*clipW+x] = 230
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

// apiCall sends one API request to st as Alice, with her ID token from
// the stack's OIDC provider.
func apiCall(t *testing.T, st *stack.Stack, method, path string, body any, out any) int {
	t.Helper()
	var buf bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&buf).Encode(body); err != nil {
			t.Fatal(err)
		}
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, st.URL+path, &buf)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+idToken(t, st, "alice"))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	return res.StatusCode
}

// The done-when test of issue 13: on the local stack, upload an MP4 through
// the presigned URL, see it become ready with the right frame count and
// rate, open it in Analyze in headless Chromium, step frames, and check
// that what the page shows is the real frame: the square where that frame
// has it, and the page's frame image (fetched and decoded by the browser)
// equal, pixel for pixel, to the tracer's video.ReadFrames of the file.
func TestUploadedMovieInAnalyzeShowsItsRealFrames(t *testing.T) {
	out := outputDir(t)
	st := startStackWith(t, out, func(o *stack.Options) {
		o.Movies, o.FailAt = []domain.Movie{}, nil
		o.LeaseDuration, o.FrameDelay, o.ProgressEvery = 0, 0, 0
	})

	path, data := writeClip(t)
	var created httpapi.MovieCreated
	if status := apiCall(t, st, http.MethodPost, "movies", map[string]any{
		"title": "Moving square", "fileName": "square.mp4", "contentType": "video/mp4", "sizeBytes": len(data)}, &created); status != http.StatusCreated {
		t.Fatalf("POST /movies: %d", status)
	}
	id := created.Movie.ID
	req, _ := http.NewRequestWithContext(t.Context(), created.Upload.Method, created.Upload.URL, bytes.NewReader(data))
	for k, v := range created.Upload.Headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("PUT to the presigned URL: %s", res.Status)
	}
	began := time.Now()
	var m httpapi.MovieDetail
	waitFor(t, "the movie is ingested", func() bool {
		apiCall(t, st, http.MethodGet, "movies/"+id, nil, &m)
		return m.Status != domain.StatusAwaitingUpload
	})
	t.Logf("ingested in %s: %+v", time.Since(began).Round(time.Millisecond), m.Video)
	if m.Status != domain.StatusReady || m.FrameCount != clipFrames || m.FrameRate != clipFPS || m.Video == nil ||
		m.Video.Width != clipW || m.Video.Height != clipH || m.Video.Codec != "h264" {
		t.Fatalf("after ingest: status %s frames %d rate %v video %+v (%s)", m.Status, m.FrameCount, m.FrameRate, m.Video, m.IngestFailure)
	}

	alice := newTabs(t, out, "alice")[0]
	signIn(alice, st.URL, "Alice")
	alice.do("open the movie in Analyze", chromedp.Navigate(st.URL+"#/movies/"+id))
	alice.waitJS("the analysis lease", `document.querySelector('[data-testid=lease-banner]')?.dataset.mode === 'edit'`)
	for _, frame := range []int{0, 1, 2, 3, 20} {
		for alice.num(`+document.querySelector('#frame-label').textContent`) < float64(frame) {
			alice.do(fmt.Sprintf("step to frame %d", frame), chromedp.Click(chromedp.ID("next-frame")))
		}
		// The canvas shows the 320x240 frame whole, at its 4:3 aspect ratio
		// (scaled to the column): the square's centre is bright, where it
		// was a frame before is dark.
		cx, cy := float64(squareX(frame)+squareSide/2)/clipW, float64(100+squareSide/2)/clipH
		px, py := float64(squareX(frame)-3)/clipW, cy
		expr := fmt.Sprintf(`(() => { const c = document.querySelector('#player'), g = c.getContext('2d');
			if (Math.abs(c.width / c.height - %d / %d) > 0.01) return false;
			const a = g.getImageData(Math.floor(c.width * %g), Math.floor(c.height * %g), 1, 1).data, b = g.getImageData(Math.floor(c.width * %g), Math.floor(c.height * %g), 1, 1).data;
			return a[0] > 200 && a[0] === a[2] && b[0] < 60 && b[0] === b[2]; })()`, clipW, clipH, cx, cy, px, py)
		alice.waitJS(fmt.Sprintf("frame %d's real image on the canvas", frame), expr)
		alice.shot(fmt.Sprintf("movies-frame-%02d", frame))
	}

	alice.waitJS("the page decodes the frames from the movie's chunks", `document.querySelector('#player').dataset.frameSource === 'chunks'`)

	// The page's two paths against the tracer's (video.ReadFrames of the
	// uploaded file): the server's JPEG (the API, S3, the browser's JPEG
	// decoder), and the frame the page decodes from the movie's chunk with
	// WebCodecs (what Analyze draws in this browser), each drawn on a
	// canvas at the frame's size. Frames 0, 7, 21 and 47 are in the
	// chunk's three GOPs (an encoded chunk has a keyframe every 20 frames).
	luma := func(draw string) string {
		return `(async () => { const bmp = await (async () => { ` + draw + ` })();
			const w = bmp.displayWidth || bmp.width, h = bmp.displayHeight || bmp.height;
			const c = new OffscreenCanvas(w, h), g = c.getContext('2d');
			g.drawImage(bmp, 0, 0);
			bmp.close();
			const d = g.getImageData(0, 0, w, h).data;
			let s = ''; for (let i = 0; i < d.length; i += 4) s += String.fromCharCode(Math.round(0.299 * d[i] + 0.587 * d[i + 1] + 0.114 * d[i + 2]));
			return btoa(s); })()`
	}
	paths := map[string]string{
		"the server's JPEG": `const r = await tracingAuth.fetch('/movies/%[1]s/frames/%[2]d/image');
			return createImageBitmap(await r.blob(), {colorSpaceConversion: 'none', premultiplyAlpha: 'none'});`,
		"the page's chunk decode": `const { decodeFrame } = await import('/views/framechunks.js');
			const m = await (await tracingAuth.fetch('/movies/%[1]s')).json();
			return decodeFrame(m, %[2]d);`,
	}
	for _, frame := range []int{0, 7, 47, 21} {
		for name, draw := range paths {
			b64 := eval[string](alice, luma(fmt.Sprintf(draw, id, frame)))
			page, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				t.Fatal(err)
			}
			var traced []byte
			if err := video.ReadFrames(t.Context(), path, video.ReadOptions{Start: frame, End: frame + 1}, func(f video.Frame) error {
				traced = append([]byte(nil), f.Gray...)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			// Both are decoded from the movie's chunk (docs/media.md): their
			// luma must be within 40 dB PSNR of the frame the tracer reads.
			if len(page) != len(traced) || videotest.PSNR(page, traced) < 40 {
				diff := 0
				for i := range min(len(page), len(traced)) {
					if page[i] != traced[i] {
						diff++
					}
				}
				t.Fatalf("frame %d, %s: the browser shows %d bytes, the tracer reads %d; %d pixels differ, luma PSNR %.1f dB (want >= 40)", frame, name, len(page), len(traced), diff, videotest.PSNR(page, traced))
			}
		}
	}
}

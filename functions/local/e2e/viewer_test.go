package e2e

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/local/stack"
)

// The phone clip of the viewer test: recorded upright in portrait
// (phoneW x phoneH), stored as a phone stores it, sideways (the pixels
// turned a quarter) with a display matrix saying "rotate 90". Upright, its
// quadrants are red (top left), green (top right), blue (bottom left) and
// yellow (bottom right), with a black square over the middle fifth: any
// turn, flip, stretch or loss of colour shows.
const (
	phoneW, phoneH, phoneFrames, phoneFPS = 144, 256, 90, 30
)

// phonePixel is the upright picture's colour at (x, y).
func phonePixel(x, y int) [3]byte {
	fx, fy := float64(x)/phoneW, float64(y)/phoneH
	switch {
	case fx >= 0.4 && fx < 0.6 && fy >= 0.4 && fy < 0.6:
		return [3]byte{0, 0, 0}
	case fy < 0.5 && fx < 0.5:
		return [3]byte{220, 30, 30}
	case fy < 0.5:
		return [3]byte{30, 190, 50}
	case fx < 0.5:
		return [3]byte{30, 50, 220}
	default:
		return [3]byte{230, 210, 30}
	}
}

// writePhoneClip encodes the clip with ffmpeg: the upright frames turned
// clockwise into landscape pixels, then the display matrix (the "rotate"
// tag, which the MP4 muxer writes as one) added without re-encoding.
func writePhoneClip(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	frame := make([]byte, 0, phoneW*phoneH*3)
	for y := range phoneH {
		for x := range phoneW {
			p := phonePixel(x, y)
			frame = append(frame, p[:]...)
		}
	}
	raw := bytes.Repeat(frame, phoneFrames)
	sideways, phone := filepath.Join(dir, "sideways.mp4"), filepath.Join(dir, "phone.mp4")
	enc := exec.CommandContext(t.Context(), "ffmpeg", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24",
		"-s", fmt.Sprintf("%dx%d", phoneW, phoneH), "-r", fmt.Sprint(phoneFPS), "-i", "-",
		"-vf", "transpose=clock", "-c:v", "libx264", "-pix_fmt", "yuv420p", sideways)
	enc.Stdin = bytes.NewReader(raw)
	if out, err := enc.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg (encode): %v\n%s", err, out)
	}
	if out, err := exec.CommandContext(t.Context(), "ffmpeg", "-loglevel", "error", "-y", "-i", sideways, "-c", "copy",
		"-metadata:s:v:0", "rotate=90", "-movflags", "+faststart", phone).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg (rotate tag): %v\n%s", err, out)
	}
	out, err := exec.CommandContext(t.Context(), "ffprobe", "-v", "error", "-select_streams", "v:0",
		"-show_entries", "stream=width,height:stream_side_data=rotation", "-of", "compact", phone).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("width=256|height=144")) || !bytes.Contains(out, []byte("rotation=")) {
		t.Fatalf("the phone clip is not stored sideways with a display matrix: %v %s", err, out)
	}
	data, err := os.ReadFile(phone)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// uploadMovie creates a movie through the API and PUTs data to its
// presigned URL, then waits until the ingest has decided.
func uploadMovie(t *testing.T, st *stack.Stack, title, file string, data []byte) httpapi.MovieDetail {
	t.Helper()
	var created httpapi.MovieCreated
	if status := apiCall(t, st, http.MethodPost, "movies", map[string]any{
		"title": title, "fileName": file, "contentType": "video/mp4", "sizeBytes": len(data)}, &created); status != http.StatusCreated {
		t.Fatalf("POST /movies: %d", status)
	}
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
	var m httpapi.MovieDetail
	waitFor(t, "the movie is ingested", func() bool {
		apiCall(t, st, http.MethodGet, "movies/"+created.Movie.ID, nil, &m)
		return m.Status != domain.StatusAwaitingUpload
	})
	return m
}

// canvasPixel is the colour of the canvas's pixel at the fractions (u, v)
// of its size.
func canvasPixel(b *tab, u, v float64) [3]int {
	b.t.Helper()
	px := eval[[]int](b, fmt.Sprintf(`(() => { const c = document.querySelector('#player');
		const d = c.getContext('2d').getImageData(Math.floor(c.width * %g), Math.floor(c.height * %g), 1, 1).data;
		return [d[0], d[1], d[2]]; })()`, u, v))
	return [3]int{px[0], px[1], px[2]}
}

// colourName names a pixel as the clip's colours (generous bounds: the
// frame went through H.264 with 4:2:0 chroma, then JPEG).
func colourName(p [3]int) string {
	r, g, b := p[0], p[1], p[2]
	switch {
	case r < 60 && g < 60 && b < 60:
		return "black"
	case r > 150 && g < 100 && b < 100:
		return "red"
	case g > 130 && r < 100 && b < 110:
		return "green"
	case b > 150 && r < 100 && g < 110:
		return "blue"
	case r > 160 && g > 150 && b < 110:
		return "yellow"
	}
	return fmt.Sprintf("rgb(%d,%d,%d)", r, g, b)
}

// The done-when test of issue 25's viewer and issue 22's phone clip: a
// phone clip with rotation metadata, uploaded and ingested on the local
// stack, shows in headless Chromium upright, in colour and at its true
// aspect ratio (the canvas's pixels against the clip's known pattern); the
// canvas follows the window's width; it zooms with the keys and the wheel
// (pixels and the exported screen<->frame conversion checked at zoom), a
// click at zoom places the marker where the conversion says, the marker's
// ring keeps its screen size, and the arrow keys, Home, End and Space step
// and play. axe-core (WCAG 2.2 AA) finds nothing on the zoomed viewer.
func TestViewerPhoneClipUprightColourAspectZoomKeys(t *testing.T) {
	out := outputDir(t)
	st := startStackWith(t, out, func(o *stack.Options) {
		o.Movies, o.FailAt = []domain.Movie{}, nil
		o.LeaseDuration, o.FrameDelay, o.ProgressEvery = 0, 0, 0
	})
	m := uploadMovie(t, st, "Phone clip", "phone.mp4", writePhoneClip(t))
	if m.Status != domain.StatusReady || m.Video == nil || m.FrameCount != phoneFrames {
		t.Fatalf("after ingest: status %s frames %d video %+v (%s)", m.Status, m.FrameCount, m.Video, m.IngestFailure)
	}
	// The media pipeline applied the display matrix: the movie is portrait.
	if m.Video.Width != phoneW || m.Video.Height != phoneH {
		t.Fatalf("the phone clip's video is %dx%d, want upright %dx%d", m.Video.Width, m.Video.Height, phoneW, phoneH)
	}
	want := float64(phoneW) / phoneH

	b := newTabs(t, out, "alice")[0]
	signIn(b, st.URL, "Alice")
	b.do("open the phone clip", chromedp.Navigate(st.URL+"#/movies/"+m.ID))
	b.waitJS("Alice edits", banner+`.dataset.mode === 'edit'`)
	shown := func(frame int) string {
		return fmt.Sprintf(`document.querySelector('#frame-label').textContent === '%d' && document.querySelector('#player').dataset.source === 'image' && document.querySelector('#player').dataset.shown === '%d'`, frame, frame)
	}
	b.waitJS("frame 0's image", shown(0))
	// The page's own module (the same instance the page runs): its exported
	// screen<->frame conversion.
	eval[bool](b, `import(new URL('views/player.js', document.baseURI).href).then(p => { window.player = p; return true; })`)

	// The aspect ratio: of the canvas on screen and of its pixels.
	aspect := func(when string) {
		t.Helper()
		css := b.num(`(() => { const r = document.querySelector('#player').getBoundingClientRect(); return r.width / r.height; })()`)
		px := b.num(`document.querySelector('#player').width / document.querySelector('#player').height`)
		if math.Abs(css/want-1) > 0.01 || math.Abs(px/want-1) > 0.01 {
			t.Errorf("%s: the frame is drawn at aspect %.4f on screen (%.4f in pixels); the movie's is %d:%d = %.4f", when, css, px, phoneW, phoneH, want)
		}
	}
	aspect("1280x1000 window")
	// Fitted: as wide as its column, or as high as the window allows.
	if !eval[bool](b, `(() => { const c = document.querySelector('#player').getBoundingClientRect(), col = document.querySelector('.player').clientWidth;
		return Math.abs(c.width - col) <= 1 || Math.abs(c.height - Math.floor(innerHeight * 0.72)) <= 1; })()`) {
		t.Errorf("the canvas (%v px wide) is neither as wide as its column (%v) nor as high as the window allows",
			b.num(`document.querySelector('#player').getBoundingClientRect().width`), b.num(`document.querySelector('.player').clientWidth`))
	}
	// Upright and in colour: each quadrant where the upright clip has it.
	pattern := func(when string) {
		t.Helper()
		for _, q := range []struct {
			u, v float64
			want string
		}{{0.2, 0.2, "red"}, {0.8, 0.2, "green"}, {0.2, 0.8, "blue"}, {0.8, 0.8, "yellow"}, {0.5, 0.5, "black"}, {0.35, 0.35, "red"}} {
			if got := colourName(canvasPixel(b, q.u, q.v)); got != q.want {
				t.Errorf("%s: the canvas at (%.2f, %.2f) of its size is %s, want %s (upright, in colour)", when, q.u, q.v, got, q.want)
			}
		}
	}
	pattern("frame 0")
	b.shot("viewer-01-phone-upright")

	// The window narrows: the canvas follows, at the same aspect ratio.
	wide := b.num(`document.querySelector('#player').getBoundingClientRect().width`)
	b.do("a 390 px wide window", chromedp.EmulateViewport(390, 500))
	b.waitJS("the canvas narrows", fmt.Sprintf(`document.querySelector('#player').getBoundingClientRect().width < %g`, wide))
	aspect("390x500 window")
	pattern("390x500 window")
	narrow := b.num(`document.querySelector('#player').getBoundingClientRect().width`)
	b.do("a 1280x900 window", chromedp.EmulateViewport(1280, 900))
	b.waitJS("the canvas widens again", fmt.Sprintf(`document.querySelector('#player').getBoundingClientRect().width > %g`, narrow))
	aspect("1280x900 window")

	// Zoom with the keys: + three times (1.25 each), about the centre.
	b.do("focus the frame", chromedp.Focus(chromedp.ID("player")))
	b.do("press + three times", chromedp.KeyEvent("+++"))
	b.waitJS("zoomed to 195 %", `Math.abs(+document.querySelector('#player').dataset.zoom - 1.953125) < 1e-6 && document.querySelector('#zoom-level').textContent === '195 %'`)
	// The black square (40-60 % of the frame) now covers 30.5-69.5 % of the
	// canvas: the point at 35 %, red at zoom 1, is black.
	if got := colourName(canvasPixel(b, 0.35, 0.35)); got != "black" {
		t.Errorf("zoomed 195 %%: the canvas at 35 %% is %s, want black (the middle square magnified)", got)
	}
	// The conversion the page exports, at this zoom.
	conv := func() (fx, fy, back float64) {
		v := eval[[]float64](b, `(() => { const p = window.player;
			const r = document.querySelector('#player').getBoundingClientRect();
			const f = p.screenToFrame(r.left + 0.1 * r.width, r.top + 0.9 * r.height);
			const s = p.frameToScreen(f.x, f.y);
			return [f.x, f.y, Math.hypot(s.clientX - (r.left + 0.1 * r.width), s.clientY - (r.top + 0.9 * r.height))]; })()`)
		return v[0], v[1], v[2]
	}
	z := 1.953125
	if fx, fy, back := conv(); math.Abs(fx-(0.5+(0.1-0.5)/z)) > 1e-3 || math.Abs(fy-(0.5+(0.9-0.5)/z)) > 1e-3 || back > 0.5 {
		t.Errorf("at zoom %.3f about the centre, screenToFrame(10 %%, 90 %%) = (%.4f, %.4f), want (%.4f, %.4f); back to the screen off by %.2f px",
			z, fx, fy, 0.5+(0.1-0.5)/z, 0.5+(0.9-0.5)/z, back)
	}

	// Zoom with the wheel about a point in the blue quadrant: the frame
	// point under the pointer stays under it.
	rect := eval[[]float64](b, `(() => { const c = document.querySelector('#player'); c.scrollIntoView({block: 'center'});
		const r = c.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	wx, wy := rect[0]+0.3*rect[2], rect[1]+0.75*rect[3]
	under := fmt.Sprintf(`(() => { const f = window.player.screenToFrame(%g, %g); return [f.x, f.y]; })()`, wx, wy)
	before := eval[[]float64](b, under)
	b.do("wheel up over the blue quadrant", chromedp.MouseEvent(input.DispatchMouseEventTypeMouseWheel, wx, wy, func(p *input.DispatchMouseEventParams) { p.DeltaX, p.DeltaY = 0.001, -300 }))
	b.waitJS("zoomed further by the wheel", `+document.querySelector('#player').dataset.zoom > 3`)
	z = b.num(`+document.querySelector('#player').dataset.zoom`)
	after := eval[[]float64](b, under)
	if math.Abs(after[0]-before[0]) > 1e-3 || math.Abs(after[1]-before[1]) > 1e-3 {
		t.Errorf("the wheel zoomed about another point: the frame point under the pointer moved from %v to %v", before, after)
	}

	// A click at zoom places the marker at the conversion's frame point.
	b.do("place a marker with the mouse at zoom", chromedp.MouseClickXY(wx, wy))
	var mk httpapi.MovieDetail
	waitFor(t, "the marker is saved", func() bool {
		apiCall(t, st, http.MethodGet, "movies/"+m.ID, nil, &mk)
		return len(mk.Markers) == 1
	})
	if got := mk.Markers[0]; math.Abs(got.X-before[0]) > 2e-3 || math.Abs(got.Y-before[1]) > 2e-3 {
		t.Errorf("a click at zoom %.2f placed the marker at (%.4f, %.4f); the frame point under the pointer is (%.4f, %.4f)", z, got.X, got.Y, before[0], before[1])
	}
	// Its ring keeps its screen size: 9 px from the centre whatever the
	// zoom, nothing of it 15 px away (it would be at 9 x zoom if scaled).
	ring := func(when string) {
		t.Helper()
		dpr := b.num(`window.devicePixelRatio`)
		hit := func(dx float64) bool {
			return eval[bool](b, fmt.Sprintf(`(() => { const c = document.querySelector('#player'), r = c.getBoundingClientRect();
				const x = Math.round((%g - r.left + %g) * %g), y = Math.round((%g - r.top) * %g);
				const d = c.getContext('2d').getImageData(x - 1, y - 1, 3, 3).data;
				for (let i = 0; i < d.length; i += 4) if (d[i] > 180 && d[i + 1] < 80 && d[i + 2] > 40 && d[i + 2] < 120) return true;
				return false; })()`, wx, dx, dpr, wy, dpr))
		}
		if !hit(9) || hit(15) {
			t.Errorf("%s: the marker's ring at 9 px: %v, at 15 px: %v (want a ring of constant screen size)", when, hit(9), hit(15))
		}
	}
	b.waitJS("the marker is drawn", `document.querySelector('#markers li') !== null`)
	ring(fmt.Sprintf("zoom %.2f", z))
	b.do("wheel up again at the marker", chromedp.MouseEvent(input.DispatchMouseEventTypeMouseWheel, wx, wy, func(p *input.DispatchMouseEventParams) { p.DeltaX, p.DeltaY = 0.001, -200 }))
	b.waitJS("zoomed further", fmt.Sprintf(`+document.querySelector('#player').dataset.zoom > %g`, z*1.2))
	ring(fmt.Sprintf("zoom %.2f", b.num(`+document.querySelector('#player').dataset.zoom`)))
	b.shot("viewer-02-zoomed-marker")
	b.checkAxe("viewer-zoomed")

	// Pan with Ctrl+arrow, then 0 fits the whole frame again.
	topMiddle := `(() => { const r = document.querySelector('#player').getBoundingClientRect(); return window.player.screenToFrame(r.left + r.width / 2, r.top).x; })()`
	cx := b.num(topMiddle)
	b.do("focus the frame", chromedp.Focus(chromedp.ID("player")))
	b.do("deselect the new marker (Escape)", chromedp.KeyEvent(kb.Escape))
	b.waitJS("no marker selected", `document.querySelector('#markers li').dataset.selected === 'false'`)
	b.do("Ctrl+ArrowRight pans right", chromedp.KeyEvent(kb.ArrowRight, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	b.waitJS("panned", fmt.Sprintf(`%s > %g + 1e-4`, topMiddle, cx))
	if f := b.num(`document.querySelector('#frame-label').textContent`); f != 0 {
		t.Errorf("Ctrl+ArrowRight stepped to frame %v; it pans", f)
	}
	b.do("0 fits the frame", chromedp.KeyEvent("0"))
	b.waitJS("the whole frame", `+document.querySelector('#player').dataset.zoom === 1`)
	pattern("fitted again")

	// The arrow keys, Home, End and Space on the frame.
	b.do("ArrowRight three times", chromedp.KeyEvent(kb.ArrowRight+kb.ArrowRight+kb.ArrowRight))
	b.waitJS("frame 3's image", shown(3))
	pattern("frame 3")
	b.do("ArrowLeft", chromedp.KeyEvent(kb.ArrowLeft))
	b.waitJS("frame 2's image", shown(2))
	b.do("Shift+ArrowRight", chromedp.KeyEvent(kb.ArrowRight, chromedp.KeyModifiers(chromedp.ModifierShift)))
	b.waitJS("frame 12's image", shown(12))
	b.do("End", chromedp.KeyEvent(kb.End))
	b.waitJS("the last frame's image (second chunk)", shown(phoneFrames-1))
	pattern("the last frame")
	b.do("Home", chromedp.KeyEvent(kb.Home))
	b.waitJS("frame 0's image", shown(0))
	if got := b.str(`document.querySelector('#frame-readout').textContent`); got != fmt.Sprintf("Frame 0 / %d \u00b7 00:00.000", phoneFrames-1) {
		t.Errorf("the readout over the frame says %q", got)
	}
	b.do("play at a quarter of the speed", chromedp.SetValue(chromedp.ID("speed"), "0.25"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('speed').dispatchEvent(new Event('change'))`))
	b.waitJS("the speed is a quarter", `document.querySelector('#speed').value === '0.25'`)
	b.do("Space plays", chromedp.Focus(chromedp.ID("player")), chromedp.KeyEvent(" "))
	b.waitJS("playing", `document.querySelector('#play').getAttribute('aria-pressed') === 'true'`)
	b.waitJS("frames advance", `+document.querySelector('#frame-label').textContent >= 5`)
	b.do("Space pauses", chromedp.KeyEvent(" "))
	b.waitJS("paused", `document.querySelector('#play').getAttribute('aria-pressed') === 'false'`)
	if speeds := eval[[]string](b, `[...document.querySelectorAll('#speed option')].map(o => o.value)`); fmt.Sprint(speeds) != "[0.25 0.5 1 1.5 2 4]" {
		t.Errorf("the speeds offered: %v", speeds)
	}
	if f := b.activeID(); f != "player" {
		t.Errorf("after the keys the focus is on %q, want the frame", f)
	}
}

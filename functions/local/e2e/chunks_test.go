package e2e

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/functions/local/stack"
)

// chunksRequested and imagesRequested: the chunk numbers and frame numbers
// the page asked the API for (Resource Timing): the chunk numbers sorted,
// the paths of the frame images.
const (
	chunksRequested = `[...new Set(performance.getEntriesByType('resource')
		.map((e) => (new URL(e.name).pathname.match(/\/chunks\/(\d+)$/) || [])[1]).filter(Boolean).map(Number))].sort((a, b) => a - b)`
	imagesRequested = `performance.getEntriesByType("resource").filter((e) => /\/frames\/\d+\/image$/.test(new URL(e.name).pathname)).map((e) => new URL(e.name).pathname)`
)

// TestFramesDecodedFromChunks: in a browser with WebCodecs the page decodes
// the frames itself from the movie's chunks (views/framechunks.js): frame 0
// asks for chunk 0 only; the frames after it are decoded ahead, so stepping
// shows each at once; a jump to frame 150 asks for its chunk (2) and shows
// it; stepping back over a GOP's start (frame 140, encoded chunks have a
// keyframe every 20 frames) decodes the GOP before; zoomed in 4x the frame
// is drawn from the decoded frame at full size; and Analyze asks the server
// for no frame image along the way.
func TestFramesDecodedFromChunks(t *testing.T) {
	out := outputDir(t)
	st := startStackWith(t, out, func(o *stack.Options) { o.Movies = nil; o.FailAt = map[string]int{} })
	const id = "zebrafish-larva" // 240 frames at 24 fps: 4 chunks of 60
	b := newTabs(t, out, "dana")[0]
	signIn(b, st.URL, "Dana")
	// The list's thumbnails are the server's images of frame 0 of its four
	// movies with a video: once they are in, forgotten.
	b.waitJS("the list's thumbnails", imagesRequested+`.length === 4`)
	b.do("open the clip", chromedp.Evaluate[chromedp.Void](`performance.clearResourceTimings()`),
		chromedp.Click(chromedp.CSS(`[data-testid="analyze-`+id+`"]`)))
	shown := func(n int) string {
		return fmt.Sprintf(`document.querySelector('#frame-label').textContent === '%d' && document.querySelector('#player').dataset.source === 'image' &&
			document.querySelector('#player').dataset.shown === '%d'`, n, n)
	}
	b.waitJS("frame 0, decoded from the chunks", shown(0)+` && document.querySelector('#player').dataset.frameSource === 'chunks'`)
	if got := eval[[]int](b, chunksRequested); len(got) != 1 || got[0] != 0 {
		t.Errorf("with frame 0 shown the page asked for chunks %v, want [0]", got)
	}
	b.waitJS("frames 1-8 decoded ahead", `+document.querySelector('#player').dataset.readyAhead >= 8`)
	for i := 1; i <= 8; i++ {
		if src := eval[string](b, `document.querySelector('#next-frame').click(), document.querySelector('#player').dataset.source + ':' + document.querySelector('#player').dataset.shown`); src != fmt.Sprintf("image:%d", i) {
			t.Errorf("frame %d was not ready when stepped onto (%s)", i, src)
		}
	}
	b.do("jump to frame 150", chromedp.SetValue(chromedp.ID("frame-slider"), "150"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('frame-slider').dispatchEvent(new Event('input'))`))
	b.waitJS("frame 150", shown(150))
	if got := eval[[]int](b, chunksRequested); len(got) != 2 || got[1] != 2 {
		t.Errorf("after a jump to frame 150 the page asked for chunks %v, want [0 2]", got)
	}
	for n := 149; n >= 138; n-- {
		b.do(fmt.Sprintf("step back to frame %d", n), chromedp.Click(chromedp.ID("prev-frame")))
		b.waitJS(fmt.Sprintf("frame %d", n), shown(n))
	}
	b.do("zoom in 4x", chromedp.Click(chromedp.ID("zoom-in")), chromedp.Click(chromedp.ID("zoom-in")),
		chromedp.Click(chromedp.ID("zoom-in")), chromedp.Click(chromedp.ID("zoom-in")), chromedp.Click(chromedp.ID("zoom-in")),
		chromedp.Click(chromedp.ID("zoom-in")), chromedp.Click(chromedp.ID("zoom-in")))
	b.waitJS("zoomed, frame 138 still shown", `+document.querySelector('#player').dataset.zoom > 4 && `+shown(138))
	b.shot("chunks-zoomed")
	if got := eval[[]string](b, imagesRequested); len(got) != 0 {
		t.Errorf("the page asked the server for frame images %v; decoding the chunks it needs none", got)
	}
}

package e2e

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/functions/local/stack"
)

// TestRealFramesAndResults: on make run's real sample clips (ffmpeg-made
// H.264, uploaded and ingested), Analyze shows the movie's own frame image
// (GET /movies/{id}/frames/{n}/image, a redirect to the bucket, fetched
// across origins under the page's CSP), steps frames with the buttons, and
// after a trace shows trails and a results table with a row per frame.
func TestRealFramesAndResults(t *testing.T) {
	out := outputDir(t)
	st := startStackWith(t, out, func(o *stack.Options) { o.Movies = nil; o.FailAt = map[string]int{} })
	const id = "zebrafish-larva" // 240 frames at 24 fps, one marker
	b := newTabs(t, out, "dana")[0]
	signIn(b, st.URL, "Dana")
	b.do("open the clip", chromedp.Click(chromedp.CSS(`[data-testid="analyze-`+id+`"]`)))
	b.waitJS("Dana edits", banner+`.dataset.mode === 'edit'`)
	b.waitJS("the frame is the movie's own image", `document.querySelector('#player').dataset.source === 'image'`)
	// The ingest stores gray frames: the canvas pixels are gray (r = g = b)
	// where the drawn stand-in is coloured.
	gray := `(() => { const c = document.querySelector('#player'); const d = c.getContext('2d').getImageData(5, c.height - 5, 1, 1).data;
		return d[0] === d[1] && d[1] === d[2]; })()`
	if !eval[bool](b, gray) {
		t.Error("the frame's pixels are not the ingested gray image")
	}
	b.do("next frame", chromedp.Click(chromedp.ID("next-frame")), chromedp.Click(chromedp.ID("next-frame")))
	b.waitJS("frame 2's image", `document.querySelector('#frame-label').textContent === '2' && document.querySelector('#player').dataset.source === 'image'`)
	b.shot("01-real-frame")

	b.do("start the trace", chromedp.Click(chromedp.ID("start-trace")))
	b.waitJS("the results load", `document.querySelector('#movie-status').dataset.status === 'traced' && +document.querySelector('#results').dataset.count > 0`)
	n := eval[int](b, `+document.querySelector('#results').dataset.count`)
	b.activate("open the results table", "#results-details summary")
	b.waitJS(fmt.Sprintf("the results table has a row per traced frame (%d)", n), fmt.Sprintf(`document.querySelectorAll('#results-table tbody tr').length === %d`, n))
	b.do("show a later frame", chromedp.SetValue(chromedp.ID("frame-slider"), "120"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('frame-slider').dispatchEvent(new Event('input'))`))
	b.waitJS("frame 120's image", `document.querySelector('#player').dataset.source === 'image'`)
	b.checkAxe("02-real-results")
}

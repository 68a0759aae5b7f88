package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/local/stack"
)

// The lost-marker movie: two markers moving left to right along straight
// lines (Fly at 30 % of the height, Bee at 70 %); the tracer loses Fly on
// frames lostFrom to lostTo-1 and never loses Bee.
const (
	lostMovie        = "e2e-lost"
	lostFrames       = 60
	lostFrom, lostTo = 20, 40
	flyY, beeY       = 0.3, 0.7
)

// lostX is both markers' x on frame i: 10 % to 90 % of the width.
func lostX(i int) float64 { return 0.1 + 0.8*float64(i)/(lostFrames-1) }

// losingTracer emits the straight paths above through the real worker and
// store, with Fly lost (no coordinates) on frames lostFrom to lostTo-1, as
// a tracer reports a marker it lost.
var losingTracer = tracer.Func(func(ctx context.Context, _ domain.Movie, plan domain.TracePlan, emit func(domain.Frame) error) error {
	for i := range plan.Frames {
		if err := ctx.Err(); err != nil {
			return err
		}
		idx := plan.FrameAt(i)
		fly := domain.Point{MarkerID: "fly", X: lostX(idx), Y: flyY, Confidence: 0.9}
		if idx >= lostFrom && idx < lostTo {
			fly = domain.Point{MarkerID: "fly", Confidence: 0.1, Lost: true}
		}
		bee := domain.Point{MarkerID: "bee", X: lostX(idx), Y: beeY, Confidence: 0.9}
		if err := emit(domain.Frame{Index: idx, Points: []domain.Point{fly, bee}}); err != nil {
			return err
		}
	}
	return nil
})

// TestLostPointsAreGapsInTrailsAndTable (issue 15, results): a trace in
// which the tracer lost a marker for some frames. The results table says
// "lost" in that marker's cell on exactly those frames (the other marker's
// coordinates stay), and on the canvas that marker's trail has a gap there:
// no line across the lost frames, not even the chord joining the points
// before and after the gap, while the other marker's trail is unbroken.
func TestLostPointsAreGapsInTrailsAndTable(t *testing.T) {
	out := outputDir(t)
	mv, err := domain.NewMovie(lostMovie, "Lost marker movie", lostFrames, 30, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	mv.Settings.Markers = []domain.Marker{{ID: "fly", Label: "Fly", X: lostX(0), Y: flyY}, {ID: "bee", Label: "Bee", X: lostX(0), Y: beeY}}
	st := startStackWith(t, out, func(o *stack.Options) {
		o.Movies, o.FailAt, o.Tracer = []domain.Movie{mv}, map[string]int{}, losingTracer
	})
	b := newTabs(t, out, "dana")[0]
	signIn(b, st.URL, "Dana")
	b.do("open the movie", chromedp.Click(chromedp.CSS(`[data-testid="analyze-`+lostMovie+`"]`)))
	b.waitJS("Dana edits", banner+`.dataset.mode === 'edit' && !document.querySelector('#start-trace').disabled`)
	b.do("start the trace", chromedp.Click(chromedp.ID("start-trace")))
	b.waitJS("the results load", fmt.Sprintf(`document.querySelector('#movie-status').dataset.status === 'traced' && document.querySelector('#results').dataset.count === '%d'`, lostFrames))

	// The table: one row per frame; Fly's two columns are one "lost" cell
	// on the lost frames, Bee's coordinates are there on every frame.
	b.activate("open the results table", "#results-details summary")
	b.waitJS("a row per frame", fmt.Sprintf(`document.querySelectorAll('#results-table tbody tr').length === %d`, lostFrames))
	head := eval[[]string](b, `[...document.querySelectorAll('#results-table thead th')].map(c => c.textContent)`)
	if strings.Join(head, "|") != "Frame|Time|Fly x %|Fly y %|Bee x %|Bee y %" {
		t.Fatalf("the table's columns: %q", head)
	}
	rows := eval[[]string](b, `[...document.querySelectorAll('#results-table tbody tr')].map(tr => [...tr.children]
		.map(c => c.classList.contains('lost') ? 'lost/' + c.colSpan + '/' + c.textContent : c.textContent).join('|'))`)
	for i, row := range rows {
		x := fmt.Sprintf("%.1f", 100*lostX(i))
		fly := x + "|" + fmt.Sprintf("%.1f", 100*flyY)
		if i >= lostFrom && i < lostTo {
			fly = "lost/2/lost"
		}
		cells := strings.Split(row, "|")
		if want := fmt.Sprintf("%d|%s|%s|%s", i, cells[1], fly, x+"|"+fmt.Sprintf("%.1f", 100*beeY)); len(cells) < 2 || row != want {
			t.Errorf("frame %d's row is %q, want %q", i, row, want)
		}
	}

	// The canvas on the last frame: the trails up to it. Lines are 2 px
	// wide (at 30 % and 70 % of the canvas's height), in the markers'
	// colours (Fly the first, red #e6194b; Bee green #3cb44b) over the dark
	// drawn frame.
	b.do("show the last frame", chromedp.SetValue(chromedp.ID("frame-slider"), fmt.Sprint(lostFrames-1)),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('frame-slider').dispatchEvent(new Event('input'))`))
	b.waitJS("the last frame", fmt.Sprintf(`document.querySelector('#frame-label').textContent === '%d'`, lostFrames-1))
	b.shot("01-lost-trail")
	// inked says whether any pixel within 3 px above or below (x, y) has
	// the colour: red (r high, g low) or green (g high, r low).
	inked := func(frame int, y float64, red bool) bool {
		test := `r > 170 && g < 90`
		if !red {
			test = `g > 140 && r < 110`
		}
		return eval[bool](b, fmt.Sprintf(`(() => { const c = document.querySelector('#player'), g0 = c.getContext('2d');
			const d = g0.getImageData(Math.floor(c.width * %g), Math.floor(c.height * %g) - 3, 1, 7).data;
			for (let i = 0; i < d.length; i += 4) { const r = d[i], g = d[i + 1]; if (%s) return true; }
			return false; })()`, lostX(frame), y, test))
	}
	// A movie without its video is drawn on a 16:9 stand-in, fitted to
	// the column (the canvas's pixels are the screen's).
	if r := b.num(`document.querySelector('#player').width / document.querySelector('#player').height`); r < 16.0/9*0.99 || r > 16.0/9*1.01 {
		t.Fatalf("the stand-in frame's aspect ratio is %.3f, want 16:9", r)
	}
	for _, f := range []int{3, 10, 17, 43, 50} {
		if !inked(f, flyY, true) {
			t.Errorf("Fly's trail is missing at frame %d, where the marker was tracked", f)
		}
	}
	for _, f := range []int{22, 30, 37} {
		if inked(f, flyY, true) {
			t.Errorf("Fly's trail is drawn at frame %d, where the marker was lost: want a gap", f)
		}
	}
	for _, f := range []int{3, 22, 30, 37, 50} {
		if !inked(f, beeY, false) {
			t.Errorf("Bee's trail is missing at frame %d; it was never lost", f)
		}
	}
	// The check can fail: on a frame in the gap Fly has no dot either.
	b.do("show a lost frame", chromedp.SetValue(chromedp.ID("frame-slider"), "30"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('frame-slider').dispatchEvent(new Event('input'))`))
	b.waitJS("frame 30", `document.querySelector('#frame-label').textContent === '30'`)
	if !inked(17, flyY, true) || inked(30, flyY, true) || !inked(30, beeY, false) {
		t.Errorf("on lost frame 30: Fly's trail before the gap %v, a Fly mark at frame 30 %v (want none), Bee's dot %v",
			inked(17, flyY, true), inked(30, flyY, true), inked(30, beeY, false))
	}
	b.checkAxe("02-lost-results")
}

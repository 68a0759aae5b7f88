package e2e

import (
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/functions/local/stack"
)

// framesRequested is the page's own list of the frame numbers whose image
// it has requested (Resource Timing names a redirected fetch by the URL
// asked for), sorted.
const framesRequested = `[...new Set(performance.getEntriesByType('resource')
	.map((e) => (new URL(e.name).pathname.match(/\/frames\/(\d+)\/image$/) || [])[1]).filter(Boolean).map(Number))].sort((a, b) => a - b)`

// TestFramePrefetchAndCache: on a real ingested clip, the page fetches the
// next frames ahead of the one shown (a bounded number, and anew around a
// frame it jumps to), so stepping forward shows an image at once; and a
// frame image is cacheable: opened again (the page's decoded frames are
// gone) the browser answers the frame's redirect and its image from its
// cache, without asking the API or the bucket again; and leaving a frame
// cancels the fetches ahead of it.
func TestFramePrefetchAndCache(t *testing.T) {
	out := outputDir(t)
	st := startStackWith(t, out, func(o *stack.Options) { o.Movies = nil; o.FailAt = map[string]int{} })
	const id = "zebrafish-larva" // 240 frames at 24 fps
	b := newTabs(t, out, "dana")[0]

	// Every frame-image response the browser gets, and whether its cache
	// answered it.
	var mu sync.Mutex
	fromCache := map[string]bool{} // request URL -> served from the cache
	imageReq := regexp.MustCompile(`/frames/(?:[^/]+/)?(\d+)(/image|\.png)`)
	ids := map[network.RequestID]string{}
	var canceled []string // frame image requests the page cancelled
	if err := chromedp.Listen(b.ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if imageReq.MatchString(e.Request.URL) {
				ids[e.RequestID] = e.Request.URL
				if e.RedirectResponse != nil {
					fromCache[e.RedirectResponse.URL] = e.RedirectResponse.FromDiskCache || e.RedirectResponse.FromPrefetchCache
				}
			}
		case *network.EventResponseReceived:
			if u, ok := ids[e.RequestID]; ok {
				fromCache[u] = e.Response.FromDiskCache || e.Response.FromPrefetchCache
			}
		case *network.EventRequestServedFromCache:
			if u, ok := ids[e.RequestID]; ok {
				fromCache[u] = true
			}
		case *network.EventLoadingFailed:
			if u, ok := ids[e.RequestID]; ok && e.Canceled {
				canceled = append(canceled, u)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := b.step()
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	cancel()

	signIn(b, st.URL, "Dana")
	// This test is of the server's JPEGs, what a browser without WebCodecs
	// is shown (TestFramesDecodedFromChunks: what this one is shown).
	b.do("use the server's frame images", chromedp.Evaluate[chromedp.Void](`localStorage.setItem('tracinglocks.frameSource', 'images')`))
	b.do("open the clip", chromedp.Click(chromedp.CSS(`[data-testid="analyze-`+id+`"]`)))
	b.waitJS("frame 0's image", `document.querySelector('#frame-label').textContent === '0' && document.querySelector('#player').dataset.source === 'image' &&
		document.querySelector('#player').dataset.frameSource === 'images'`)
	// Without a step, the next frames are requested ahead, and no further.
	b.waitJS("frames 1-8 requested ahead of frame 0", `(() => { const f = `+framesRequested+`; return [1,2,3,4,5,6,7,8].every((n) => f.includes(n)); })()`)
	if got := eval[[]int](b, framesRequested); len(got) > 9 {
		t.Errorf("with frame 0 shown the page requested frames %v: more than the 8 ahead", got)
	}
	// Stepping forward shows a fetched-ahead image at once: no drawn
	// stand-in in the same task as the click.
	b.waitJS("frames 1-3 decoded ahead", `+document.querySelector('#player').dataset.readyAhead >= 3`)
	for i := 1; i <= 3; i++ {
		if src := eval[string](b, `document.querySelector('#next-frame').click(), document.querySelector('#player').dataset.source`); src != "image" {
			t.Errorf("frame %d was not ready when shown (%s)", i, src)
		}
	}
	// A jump: the frames after the new one are requested, the ones behind
	// it are not (after a jump they would cost the server a second decode
	// of the chunk: web/views/frameimages.js); the requests stay bounded
	// (what was near frame 3, and what is after frame 200).
	b.do("jump to frame 200", chromedp.SetValue(chromedp.ID("frame-slider"), "200"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('frame-slider').dispatchEvent(new Event('input'))`))
	b.waitJS("frame 200's image and frames 201-208 requested", `document.querySelector('#player').dataset.source === 'image' &&
		(() => { const f = `+framesRequested+`; return [201,202,203,204,205,206,207,208].every((n) => f.includes(n)); })()`)
	got := eval[[]int](b, framesRequested)
	if len(got) > 12+9 {
		t.Errorf("after showing frames 0-3 and 200 the page requested %d frames: %v", len(got), got)
	}
	if slices.Contains(got, 199) {
		t.Errorf("after a jump to frame 200 the page requested frame 199 behind it: %v", got)
	}
	// A jump back: still the frames after it, none before it (a jump does
	// not take the direction of a step: the frames before would be a
	// second decode on the server).
	b.do("jump back to frame 100", chromedp.SetValue(chromedp.ID("frame-slider"), "100"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('frame-slider').dispatchEvent(new Event('input'))`))
	b.waitJS("frame 100's image and frames 101-108 requested", `document.querySelector('#player').dataset.source === 'image' &&
		(() => { const f = `+framesRequested+`; return [101,102,103,104,105,106,107,108].every((n) => f.includes(n)); })()`)
	if got := eval[[]int](b, framesRequested); slices.ContainsFunc(got, func(n int) bool { return n >= 92 && n < 100 }) {
		t.Errorf("after a jump back to frame 100 the page requested frames before it: %v", got)
	}

	// Leave and open the movie again: the page's decoded frames are gone;
	// frame 0's image (the API answers it directly, a JPEG decoded from the
	// movie's chunk: docs/media.md) comes from the browser's cache, and so
	// would a redirect's target if the API redirected.
	mu.Lock()
	clear(fromCache)
	mu.Unlock()
	b.do("back to the list and open the clip again", chromedp.Evaluate[chromedp.Void](`location.hash = '#/'`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="analyze-`+id+`"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="analyze-`+id+`"]`)))
	b.waitJS("frame 0's image again", `document.querySelector('#frame-label').textContent === '0' && document.querySelector('#player').dataset.source === 'image'`)
	mu.Lock()
	api, image := "", ""
	for u := range fromCache {
		if m := imageReq.FindStringSubmatch(u); m != nil && m[1] == "0" {
			if m[2] == "/image" {
				api = u
			} else {
				image = u
			}
		}
	}
	cached := map[string]bool{api: fromCache[api]}
	if image != "" {
		cached[image] = fromCache[image]
	}
	mu.Unlock()
	if api == "" {
		t.Fatalf("frame 0's requests after opening the movie again: %v", cached)
	}
	for u, hit := range cached {
		if !hit {
			t.Errorf("opened again, %s was not served from the browser's cache", u)
		}
	}

	// Cancelled on navigation: with frame images slow to arrive (1.5 s each,
	// emulated), open another clip and jump to frame 150 while the frames
	// after its frame 0 are on their way; those fetches are cancelled,
	// frame 150 still shows.
	const other = "mouse-open-field"
	slow := []*network.Conditions{{URLPattern: st.URL + "movies/" + other + "/frames/*/image", Latency: 1500, DownloadThroughput: -1, UploadThroughput: -1}}
	ctx, cancel = b.step()
	_, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{MatchedNetworkConditions: slow})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	b.do("open another clip", chromedp.Evaluate[chromedp.Void](`location.hash = '#/movies/`+other+`'`))
	b.waitJS("its editor", `!document.querySelector('#analyze-view').hidden && document.querySelector('#movie-title').textContent !== ''`)
	// Once frame 0 shows, the frames after it are asked for (each takes
	// 1.5 s); the jump comes while they are on their way. (Jumping before
	// frame 0 shows, as this test did, found nothing to cancel whenever the
	// editor showed first: the fetches ahead wait for the shown frame.)
	ahead := regexp.MustCompile(`/movies/` + other + `/frames/1/image$`)
	waitFor(t, "frame 1 of the other clip asked for ahead", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, u := range ids {
			if ahead.MatchString(u) {
				return true
			}
		}
		return false
	})
	b.do("jump", chromedp.SetValue(chromedp.ID("frame-slider"), "150"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('frame-slider').dispatchEvent(new Event('input'))`))
	b.waitJS("frame 150's image", `document.querySelector('#frame-label').textContent === '150' && document.querySelector('#player').dataset.source === 'image'`)
	mu.Lock()
	gone := slices.Clone(canceled)
	mu.Unlock()
	near0 := regexp.MustCompile(`/movies/` + other + `/frames/[1-8]/image$`)
	n := 0
	for _, u := range gone {
		if near0.MatchString(u) {
			n++
		}
	}
	if n == 0 {
		t.Errorf("jumping away from frame 0 cancelled none of the fetches ahead of it (cancelled: %q)", gone)
	}
}

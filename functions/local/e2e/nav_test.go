package e2e

import (
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestOpeningTwiceAtOnceStillOpens: a second navigation to the movie while
// the first is still reading it (on a cold load, the sign-in restore's
// setUser navigates again right after the page's own navigate) opens it:
// the first's answer belongs to an older generation and is dropped, so the
// second must not skip the movie as already open. Before the fix the page
// stayed blank (no lease asked for); fresh-clone CI saw it once at load 12-16.
func TestOpeningTwiceAtOnceStillOpens(t *testing.T) {
	out := outputDir(t)
	st := startStack(t, out)
	b := newTabs(t, out, "alice")[0]
	signIn(b, st.URL, "Alice")
	b.waitJS("the list", `!!document.querySelector('[data-testid="analyze-`+movieID+`"]')`)
	ctx, cancel := b.step()
	_, err := chromedp.Call(ctx, network.Enable, network.EnableParams{})
	if err == nil {
		_, err = chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
			MatchedNetworkConditions: []*network.Conditions{{URLPattern: st.URL + "movies/" + movieID, Latency: 1500, DownloadThroughput: -1, UploadThroughput: -1}}})
	}
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	b.do("open the movie", chromedp.Evaluate[chromedp.Void](`location.hash = '#/movies/`+movieID+`'`))
	time.Sleep(300 * time.Millisecond) // the first read is on its way (1.5 s)
	b.do("navigate again while it is read", chromedp.Evaluate[chromedp.Void](`window.dispatchEvent(new HashChangeEvent('hashchange'))`))
	b.waitJS("Alice edits the movie", banner+`.dataset.mode === 'edit' && document.querySelector('#movie-title').textContent !== ''`)
}

package e2e

import (
	"net/http"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
)

// holdLeaseReleases delays every DELETE of an analysis lease this tab sends
// by d before it leaves the browser, as a slow network or a busy API does:
// a page that leaves a movie and opens it again at once must not ask for
// the lease before the release was answered (the API refuses it then, as
// held by the same user "in another tab"). Other requests to the lease
// route go on at once.
func holdLeaseReleases(b *tab, d time.Duration) {
	b.t.Helper()
	if err := chromedp.Listen(b.ctx, func(ev any) {
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		wait := time.Duration(0)
		if e.Request.Method == http.MethodDelete {
			wait = d
		}
		go func() {
			time.Sleep(wait)
			_, _ = chromedp.Call(b.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
		}()
	}); err != nil {
		b.t.Fatal(err)
	}
	ctx, cancel := b.step()
	defer cancel()
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{
		Patterns: []*fetch.RequestPattern{{URLPattern: "*/analysis-lease"}},
	}); err != nil {
		b.t.Fatal(err)
	}
}

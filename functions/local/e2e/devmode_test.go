package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/functions/local/stack"
)

// devHeaderSpy counts the page's requests that carry a development
// identity header.
const devHeaderSpy = `(() => {
  window.__devHeaders = 0;
  const f = window.fetch;
  window.fetch = (input, init) => {
    const h = new Headers((init && init.headers) || {});
    if (h.has('X-Dev-User') || h.has('X-Dev-User-Name')) window.__devHeaders++;
    return f(input, init);
  };
})();`

// TestPageUsesTheDevelopmentIdentityOnlyWhenTheStackSaysSo: the page's
// development identity (its name picker and the X-Dev-User headers) is used
// only when /auth-config.json says {"mode": "dev"}. With sign-in settings
// that cannot be read (blocked here), on a stack that would even accept the
// development headers (DevAuth), the page says sign-in is unavailable,
// shows no name picker and no movies, and sends no development header, even
// with a development identity left in its sessionStorage. A stack started
// without sign-in (make run -dev-only) is the one case that uses the picker.
func TestPageUsesTheDevelopmentIdentityOnlyWhenTheStackSaysSo(t *testing.T) {
	out := outputDir(t)
	st := startStackWith(t, out, func(o *stack.Options) { o.DevAuth = true })
	b := newTabs(t, out, "mallory")[0]
	ctx, cancel := b.step()
	_, err := chromedp.Call(ctx, network.SetBlockedURLs, network.SetBlockedURLsParams{
		URLPatterns: []*network.BlockPattern{{URLPattern: "*://*:*/auth-config.json", Block: true}}})
	if err == nil {
		_, err = chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: devHeaderSpy})
	}
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	b.do("open the page", chromedp.Navigate(st.URL))
	settled := `window.tracingAuth && tracingAuth.mode() !== 'loading' && document.readyState === 'complete'`
	b.waitJS("the sign-in module has read (or failed to read) its settings", settled)
	b.do("leave a development identity in sessionStorage and reload", chromedp.Evaluate[chromedp.Void](
		`sessionStorage.setItem('tracinglocks.devUser', JSON.stringify({id: 'dev-mallory', name: 'Mallory'}))`), chromedp.Reload())
	waitAcrossNavigation(b, "the sign-in module has settled after the reload", settled)
	// A page on the development identity shows the list as it requests it,
	// so once either view shows, its headers have been counted.
	b.waitJS("the page has rendered its signed-out or signed-in view", `!document.querySelector('#need-identity').hidden || !document.querySelector('#list-view').hidden`)
	if got := b.str(`tracingAuth.mode()`); got != "unavailable" {
		t.Errorf("with unreadable sign-in settings the sign-in module's mode is %q, want unavailable", got)
	}
	if eval[bool](b, `!document.querySelector('#identity-form').hidden`) {
		t.Error("the development name picker shows")
	}
	if eval[bool](b, `!document.querySelector('#list-view').hidden`) {
		t.Error("the page shows the movie list on the development identity")
	}
	if n := eval[int](b, `window.__devHeaders`); n != 0 {
		t.Errorf("the page sent %d requests with a development identity header", n)
	}
	unavailable := `document.querySelector('[data-testid="auth-user"]')?.textContent === 'sign-in is unavailable' && document.querySelector('#list-view').hidden && !document.querySelector('#need-identity').hidden`
	b.waitJS("the page says sign-in is unavailable", unavailable)
	if got := b.str(`document.querySelector('#need-identity').innerText`); !containsAll(got, "not possible", "Reload") {
		t.Errorf("the signed-out page says %q", got)
	}
	b.checkAxe("01-sign-in-unavailable")

	// Started without sign-in, the stack says mode dev: the picker works.
	t.Run("stack-without-sign-in", func(t *testing.T) {
		out := outputDir(t)
		devStack := startStackWith(t, out, func(o *stack.Options) { o.SignIn = false })
		dev := newTabs(t, out, "dev")[0]
		signInDev(dev, devStack.URL, "Alice")
		dev.waitJS("the list shows the movie", `!!document.querySelector('[data-testid="analyze-`+movieID+`"]')`)
		dev.shot("01-dev-mode-list")
	})
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/functions/local/stack"
	"github.com/movietrace/tracinglocks/infra/edge"
)

// edgeTemplate is the dev stack's synthesized edge (infra/stack keeps it
// equal to the synthesis: TestEdgeTemplateIsCurrent).
const edgeTemplate = "../../../infra/stack/testdata/dev-edge.template.json"

func loadEdgeTemplate(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(edgeTemplate))
	if err != nil {
		t.Fatal(err)
	}
	var tpl map[string]any
	if err := json.Unmarshal(b, &tpl); err != nil {
		t.Fatal(err)
	}
	return tpl
}

// startDeployedShape starts the stack in the deployed shape
// (stack.Options.Edge) from tpl: the page with the template's response
// headers, the API through its path patterns, the provider on two other
// origins.
func startDeployedShape(t *testing.T, out string, tpl map[string]any, more ...func(*stack.Options)) *stack.Stack {
	t.Helper()
	e, err := edge.FromTemplate(tpl)
	if err != nil {
		t.Fatal(err)
	}
	return startStackWith(t, out, func(o *stack.Options) {
		o.Edge = e
		o.FrameDelay = 10 * time.Millisecond
		o.Movies, o.FailAt = o.Movies[:1], map[string]int{}
		for _, f := range more {
			f(o)
		}
	})
}

// TestFramesInTheDeployedShape: under the template's CSP and with the
// bucket on its own origin (its CORS rule as infra/stack makes it), Analyze
// decodes a real movie's frames from its chunks: the chunk's URL from the
// API, the MP4 from the bucket (connect-src), WebCodecs; stepping shows the
// next frame. (A fetch the CSP blocked would, after three tries, fall back
// to the server's images: data-frame-source would say "images".)
func TestFramesInTheDeployedShape(t *testing.T) {
	out := outputDir(t)
	st := startDeployedShape(t, out, loadEdgeTemplate(t), func(o *stack.Options) { o.Movies = nil })
	const id = "zebrafish-larva"
	alice := newTabs(t, out, "alice")[0]
	signInAs(alice, st.URL+"#/movies/"+id, "alice", "Alice")
	shown := func(n string) string {
		return `document.querySelector('#player').dataset.source === 'image' && document.querySelector('#player').dataset.shown === '` + n + `'`
	}
	alice.waitJS("frame 0 is shown", shown("0"))
	if got := eval[string](alice, `document.querySelector('#player').dataset.frameSource`); got != "chunks" {
		t.Fatalf("in the deployed shape the page draws frames from %q, want chunks", got)
	}
	alice.do("next frame", chromedp.Click(chromedp.ID("next-frame")))
	alice.waitJS("frame 1 is shown", shown("1"))
	if got := eval[string](alice, `document.querySelector('#player').dataset.frameSource`); got != "chunks" {
		t.Fatalf("after a step the page draws frames from %q, want chunks", got)
	}
	alice.shot("deployed-frames")
}

// TestSignInInTheDeployedShape: the page served as CloudFront serves it
// (the synthesized template's response headers, its CSP included; the API
// through its path patterns) signs in through a provider whose issuer and
// sign-in pages are on two other origins, as Cognito's are; the user stays
// signed in across a reload and in a new tab (sessionStorage, and the tabs
// share the user), never with a token in localStorage; a sign-out in one tab
// signs the other out.
func TestSignInInTheDeployedShape(t *testing.T) {
	out := outputDir(t)
	st := startDeployedShape(t, out, loadEdgeTemplate(t))
	res, err := http.Get(st.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for k := range st.EdgeHeaders {
		if res.Header.Get(k) != st.EdgeHeaders.Get(k) {
			t.Errorf("the page's %s is %q, want the template's %q", k, res.Header.Get(k), st.EdgeHeaders.Get(k))
		}
	}
	csp := res.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "https://cognito-idp.us-east-1.amazonaws.com") || strings.Contains(st.OIDC.Issuer(), strings.TrimSuffix(st.URL, "/")) {
		t.Fatalf("not the deployed shape: CSP %q, issuer %s, page %s", csp, st.OIDC.Issuer(), st.URL)
	}

	tabs := newTabs(t, out, "alice")
	alice := tabs[0]
	signInAs(alice, st.URL+"#/movies/"+movieID, "alice", "Alice")
	alice.waitJS("Alice holds the lease (the API through the path patterns)", `document.querySelector('#lease-banner').dataset.mode === 'edit'`)
	alice.shot("deployed-01-signed-in")
	if got := eval[bool](alice, `Object.keys(localStorage).some(k => /eyJ/.test(localStorage.getItem(k) || ''))`); got {
		t.Fatal("a token is in localStorage")
	}
	alice.do("reload", chromedp.Reload())
	waitAcrossNavigation(alice, "a reload keeps the sign-in", `document.querySelector('[data-testid="auth-user"]')?.textContent === 'signed in as Alice'`)

	// A new tab of the same browser: signed in from the open tab.
	second := newTabInSameBrowser(t, alice, "alice-tab-2")
	second.do("open the page in a new tab", chromedp.Navigate(st.URL))
	waitAcrossNavigation(second, "the new tab is signed in", `document.querySelector('[data-testid="auth-user"]')?.textContent === 'signed in as Alice'`)
	if n := eval[int](second, `tracingAuth.fetch('/movies').then(r => r.status)`); n != 200 {
		t.Fatalf("the new tab's GET /movies answered %d", n)
	}
	if n := st.OIDC.Grants()["authorization_code"]; n != 1 {
		t.Errorf("%d authorization code grants, want 1: the reload and the new tab needed no sign-in", n)
	}

	second.do("sign out in the new tab", chromedp.Click(chromedp.CSS(`[data-testid="sign-out"]`)))
	waitAcrossNavigation(second, "signed out", `location.href === '`+st.URL+`' && document.querySelector('[data-testid="auth-user"]')?.textContent === 'not signed in'`)
	alice.waitJS("the first tab is signed out too", `document.querySelector('[data-testid="auth-user"]')?.textContent === 'not signed in'`)
}

// TestSignInIsBlockedByACSPWithoutTheIssuer: the same, from the template
// as it was before issue 23 (connect-src named the login domain, not the
// issuer's origin): pressing Sign in does nothing, because the page may not
// fetch the issuer's discovery document. This is what the deployed page
// did, and what TestSignInInTheDeployedShape would find if the CSP
// regressed.
func TestSignInIsBlockedByACSPWithoutTheIssuer(t *testing.T) {
	tpl := loadEdgeTemplate(t)
	b, _ := json.Marshal(tpl)
	var old map[string]any
	// The old CSP: "connect-src 'self' https://<domain>.auth... https://*.s3...".
	if err := json.Unmarshal([]byte(strings.Replace(string(b), "https://cognito-idp.", "https://no-issuer.", 1)), &old); err != nil {
		t.Fatal(err)
	}
	out := outputDir(t)
	st := startDeployedShape(t, out, old)
	if strings.Contains(st.EdgeHeaders.Get("Content-Security-Policy"), "connect-src 'self' "+strings.TrimSuffix(st.OIDC.Issuer(), "/oidc")) {
		t.Fatal("the old CSP allows the local issuer")
	}
	tabs := newTabs(t, out, "carol")
	c := tabs[0]
	c.do("open the page and press Sign in", chromedp.Navigate(st.URL),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-in"]`)), chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)))
	time.Sleep(3 * time.Second)
	if got := eval[string](c, `location.origin + ' ' + document.querySelector('[data-testid="auth-user"]')?.textContent`); got != strings.TrimSuffix(st.URL, "/")+" not signed in" {
		t.Fatalf("with the old CSP the page went on: %q", got)
	}
	c.mu.Lock()
	console := strings.Join(c.console, "\n")
	c.mu.Unlock()
	if !strings.Contains(console, "Content Security Policy") {
		t.Errorf("no CSP violation on the console:\n%s", console)
	}
	c.shot("old-csp-sign-in-does-nothing")
}

// newTabInSameBrowser opens another tab in b's browser (same profile, so
// the same origin's BroadcastChannel reaches b's page).
func newTabInSameBrowser(t *testing.T, b *tab, name string) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	return &tab{t: t, name: name, ctx: ctx, out: b.out, download: b.download, began: time.Now()}
}

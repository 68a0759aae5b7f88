package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/functions/local/stack"
)

// signInAs opens the page at url and signs in through the local OIDC
// provider (stack.Options.SignIn) by clicking login's button on its sign-in
// page (oidcprovider.TestUsers: "alice", "bob"); name is the display name
// the page then shows. A tab already signed in as name (its sessionStorage)
// stays so. No development header is involved: the page holds
// the provider's tokens and sends the ID token.
func signInAs(b *tab, url, login, name string) {
	b.t.Helper()
	who := `document.querySelector('[data-testid="auth-user"]')?.textContent`
	b.do("open the page", chromedp.Navigate(url))
	waitAcrossNavigation(b, "the page knows who is signed in", `['signed in as `+name+`', 'not signed in'].includes(`+who+`)`)
	if eval[string](b, who) == "signed in as "+name {
		return // this tab's sessionStorage still holds the user's tokens
	}
	b.do("start signing in", chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)))
	b.do("choose "+name+" on the provider's page",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-`+login+`"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="login-`+login+`"]`)),
	)
	waitAcrossNavigation(b, "signed in as "+name, who+` === 'signed in as `+name+`'`)
}

// waitAcrossNavigation is waitJS while redirects (provider, page) may
// still replace the document under the poll, which chromedp reports as
// "Inspected target navigated or closed" or "Cannot find context with
// specified id": the poll then starts again on the new document, within one
// step's time.
func waitAcrossNavigation(b *tab, what, expr string) {
	b.t.Helper()
	deadline := time.Now().Add(stepTimeout)
	for {
		ctx, cancel := context.WithDeadline(b.ctx, deadline)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(100*time.Millisecond)))
		cancel()
		if err == nil {
			return
		}
		replaced := strings.Contains(err.Error(), "navigated or closed") || strings.Contains(err.Error(), "Cannot find context")
		if !replaced || time.Now().After(deadline) {
			b.t.Fatalf("%s: waiting until %s (%s): %v\npage text:\n%s", b.name, what, expr, err, b.text())
		}
	}
}

// startSignInStack is startStack's stack (sign-in through the local OIDC
// provider, no development identity) with tokens of tokenTTL; only the
// end-to-end movie, no injected failure.
func startSignInStack(t *testing.T, out string, tokenTTL time.Duration) *stack.Stack {
	t.Helper()
	return startStackWith(t, out, func(o *stack.Options) {
		o.SignInTokenTTL = tokenTTL
		o.FrameDelay = 10 * time.Millisecond
		o.Movies, o.FailAt = o.Movies[:1], map[string]int{}
	})
}

// TestTwoUsersSignInThroughTheLocalProvider: Alice and Bob sign in through
// the local OIDC provider in two browsers; the API knows them by their
// tokens' name claims (Bob sees "Alice editing"; his own write with his
// token is refused with 409); the page renews the tokens with the refresh
// token before they expire and keeps working; the tokens are in the tab's
// sessionStorage (none in localStorage), so a reload stays signed in;
// sign-out ends it.
func TestTwoUsersSignInThroughTheLocalProvider(t *testing.T) {
	out := outputDir(t)
	// Tokens of 65 s: oidc-client-ts renews 60 s before expiry, so within
	// about 5 s of signing in.
	st := startSignInStack(t, out, 65*time.Second)
	tabs := newTabs(t, out, "alice", "bob")
	alice, bob := tabs[0], tabs[1]
	lockOf := `document.querySelector('[data-testid="lock-` + movieID + `"]')`
	banner := `document.querySelector('#lease-banner')`

	alice.do("open the page", chromedp.Navigate(st.URL))
	alice.waitJS("the page asks to sign in", `document.querySelector('[data-testid="auth-user"]')?.textContent === 'not signed in' && document.querySelector('#identity-form').hidden`)
	alice.checkAxe("00-signed-out")
	if n := eval[int](alice, `fetch('/movies').then(r => r.status)`); n != 401 {
		t.Fatalf("before sign-in GET /movies answered %d, want 401", n)
	}
	signInAs(alice, st.URL+"#/movies/"+movieID, "alice", "Alice")
	if got := eval[string](alice, `location.search + location.hash`); got != "#/movies/"+movieID {
		t.Fatalf("after sign-in the page is at %q: the code is not cleaned from the URL or the route is lost", got)
	}
	alice.waitJS("Alice holds the lease", banner+`.dataset.mode === 'edit'`)
	alice.shot("01-alice-signed-in-editing")

	// Bob's sign-in step by step, with axe-core on the provider's page.
	bob.do("open the page and start signing in", chromedp.Navigate(st.URL),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-in"]`)), chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`)))
	bob.do("the provider's page", chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-bob"]`)))
	bob.checkAxe("02a-provider-sign-in-page")
	bob.do("choose Bob", chromedp.Click(chromedp.CSS(`[data-testid="login-bob"]`)))
	waitAcrossNavigation(bob, "signed in as Bob", `document.querySelector('[data-testid="auth-user"]')?.textContent === 'signed in as Bob'`)
	bob.waitJS("the list shows Alice's lock by her token's name", lockOf+`?.dataset.kind === 'analysis' && `+lockOf+`.textContent.includes('Alice editing since')`)
	bob.shot("02-bob-sees-alice")
	// Bob's own token, through the page's sign-in module: the API knows him
	// and refuses his write; development headers count for nothing.
	refused := eval[string](bob, `tracingAuth.fetch('/movies/`+movieID+`/markers', {method: 'PUT', headers: {'Content-Type': 'application/json',
		'Lease-Id': '0123456789abcdef0123456789abcdef'}, body: JSON.stringify({markers: []})}).then(async r => r.status + ' ' + (await r.json()).code)`)
	if refused != "409 lease_held" {
		t.Fatalf("Bob's marker write with his token got %q, want 409 lease_held", refused)
	}
	devOnly := eval[int](bob, `fetch('/movies', {headers: {'X-Dev-User': 'dev-alice', 'X-Dev-User-Name': 'Alice'}}).then(r => r.status)`)
	if devOnly != 401 {
		t.Fatalf("development headers without a token got %d, want 401", devOnly)
	}
	if got := eval[bool](bob, `Object.keys(localStorage).some(k => /eyJ/.test(localStorage.getItem(k) || ''))`); got {
		t.Fatal("a token is in localStorage; tokens stay in the tab's sessionStorage")
	}
	if got := eval[bool](bob, `Object.keys(sessionStorage).some(k => /^oidc\.user:/.test(k) && /eyJ/.test(sessionStorage.getItem(k)))`); !got {
		t.Fatal("no tokens in the tab's sessionStorage: a reload would sign out")
	}

	// Renewal: the refresh token grant runs before the 65 s tokens expire,
	// and the page goes on working with the new tokens.
	waitFor(t, "the page renews its tokens with the refresh token", func() bool { return st.OIDC.Grants()["refresh_token"] >= 2 })
	bob.waitJS("Bob is still signed in after renewal", `document.querySelector('[data-testid="auth-user"]').textContent === 'signed in as Bob'`)
	if n := eval[int](bob, `tracingAuth.fetch('/movies').then(r => r.status)`); n != 200 {
		t.Fatalf("after renewal GET /movies answered %d", n)
	}

	// Tokens live in the tab's sessionStorage: a reload stays signed in.
	bob.do("reload", chromedp.Reload())
	waitAcrossNavigation(bob, "a reload keeps the sign-in", `document.querySelector('[data-testid="auth-user"]')?.textContent === 'signed in as Bob'`)

	// Sign-out: through the provider's logout endpoint back to the page.
	bob.do("sign out", chromedp.Click(chromedp.CSS(`[data-testid="sign-out"]`)))
	waitAcrossNavigation(bob, "signed out", `location.href === '`+st.URL+`' && document.querySelector('[data-testid="auth-user"]')?.textContent === 'not signed in'`)
	bob.shot("03-bob-signed-out")
	if n := st.OIDC.Grants()["authorization_code"]; n != 2 {
		t.Errorf("%d authorization code grants, want 2 (Alice, Bob; Bob's reload signs in from sessionStorage)", n)
	}
	if !strings.Contains(eval[string](alice, banner+`.dataset.mode`), "edit") {
		t.Error("Alice lost her lease meanwhile")
	}
}

// Package smoke is the browser's path through the page as one smoke walk,
// in headless Chromium: sign in (through the local OIDC provider's page or
// Cognito's managed login), list, open a movie in Analyze (edit), place a
// marker, trace, see the results, leave (release), sign out. `make
// smoke-deployed ENV=dev` runs it against the deployed page; the e2e tests
// run the same Walk against `make run`'s stack and its local provider.
package smoke

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// Options configure Walk.
type Options struct {
	// URL is the page, e.g. the stack's PageUrl output.
	URL string
	// Login is the local provider's test user button ("alice", "bob").
	Login string
	// Username and Password sign in on Cognito's managed login instead
	// (a user without MFA, or whose MFA the environment does not require).
	Username, Password string
	// MovieID is the movie to trace. Without it the walk adds its own movie
	// from Clip (an MP4) through the page, as a user would (the Add a movie
	// panel's file picker; the upload straight to the bucket, in parts when
	// the clip is larger than the API's part size; waiting until it is
	// ready), traces it, renames it and deletes it at the end from the list:
	// it never traces or changes a lab's movies.
	MovieID string
	Clip    []byte
	// Chromium is the browser binary (default /usr/bin/chromium).
	Chromium string
	// Out, when set, receives a screenshot of each step and of a failure.
	Out string
	// StepTimeout bounds each step (default 30 s); TraceTimeout the trace
	// (default 10 min).
	StepTimeout, TraceTimeout time.Duration
	// Log receives one line per step (default: none).
	Log func(format string, args ...any)
}

// Walk runs the walk; the first failing step is the error.
func Walk(ctx context.Context, o Options) (err error) {
	if o.URL == "" || (o.Login == "") == (o.Username == "") {
		return errors.New("smoke: URL and one of Login or Username/Password are required")
	}
	if o.MovieID == "" && len(o.Clip) == 0 {
		return errors.New("smoke: a MovieID or a Clip to add as its own movie is required")
	}
	page, err := url.Parse(o.URL)
	if err != nil || page.Host == "" {
		return fmt.Errorf("smoke: URL %q", o.URL)
	}
	if o.Chromium == "" {
		o.Chromium = "/usr/bin/chromium"
	}
	if o.StepTimeout <= 0 {
		o.StepTimeout = 30 * time.Second
	}
	if o.TraceTimeout <= 0 {
		o.TraceTimeout = 10 * time.Minute
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	profile, err := os.MkdirTemp("", "smoke-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(o.Chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 1000))
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	// Start the browser bound to bctx itself: a browser started by a step's
	// shorter context would close with it.
	if err := chromedp.Do(bctx); err != nil {
		return fmt.Errorf("smoke: start chromium: %w", err)
	}
	w := &walker{o: o, ctx: bctx, origin: page.Scheme + "://" + page.Host}
	defer func() {
		if err != nil {
			w.shot("failure")
		}
	}()
	return w.run()
}

type walker struct {
	o      Options
	ctx    context.Context
	origin string
	n      int
}

func (w *walker) step(what string, f func(context.Context) error) error {
	w.n++
	w.o.Log("smoke: %d. %s", w.n, what)
	ctx, cancel := context.WithTimeout(w.ctx, w.o.StepTimeout)
	defer cancel()
	if err := f(ctx); err != nil {
		return fmt.Errorf("smoke: step %d, %s: %w", w.n, what, err)
	}
	w.shot(fmt.Sprintf("%02d", w.n))
	return nil
}

func (w *walker) shot(name string) {
	if w.o.Out == "" {
		return
	}
	ctx, cancel := context.WithTimeout(w.ctx, 10*time.Second)
	defer cancel()
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(80)); err == nil {
		_ = os.WriteFile(filepath.Join(w.o.Out, "smoke-"+name+".png"), png, 0o644)
	}
}

// until polls expr until it is true, across the redirects of a sign-in
// (which replace the document under the poll).
func until(ctx context.Context, expr string) error {
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(200*time.Millisecond)))
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || !(strings.Contains(err.Error(), "navigated or closed") || strings.Contains(err.Error(), "Cannot find context")) {
			return fmt.Errorf("waiting until %s: %w", expr, err)
		}
	}
}

func eval[T any](ctx context.Context, expr string) (T, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

func (w *walker) run() error {
	signedIn := `document.querySelector('[data-testid="auth-user"]')?.textContent.startsWith('signed in as ')`
	movie := w.o.MovieID
	own := movie == ""
	lock := func() string { return `document.querySelector('[data-testid="lock-` + movie + `"]')` }
	banner := `document.querySelector('#lease-banner')`
	steps := []struct {
		what string
		f    func(context.Context) error
	}{
		{"open the page", func(ctx context.Context) error {
			_, err := chromedp.Run(ctx, chromedp.Navigate(w.o.URL))
			if err != nil {
				return err
			}
			return until(ctx, `!!document.querySelector('[data-testid="sign-in"]')`)
		}},
		{"sign in", w.signIn},
		{"add its own movie from the page: the file picker, the upload straight to the bucket, until it is ready", func(context.Context) error {
			if !own {
				return nil
			}
			ctx, cancel := context.WithTimeout(w.ctx, w.o.TraceTimeout)
			defer cancel()
			if err := until(ctx, signedIn); err != nil {
				return err
			}
			id, err := w.addOwnMovie(ctx)
			if err != nil {
				return err
			}
			movie = id
			w.o.Log("smoke:    own movie %s", movie)
			return nil
		}},
		{"the list shows the movie", func(ctx context.Context) error {
			if err := until(ctx, signedIn+` && !!document.querySelector('[data-testid="analyze-`+movie+`"]')`); err != nil {
				return err
			}
			w.o.Log("smoke:    movie %s", movie)
			return until(ctx, lock()+`?.dataset.kind === ""`)
		}},
		{"open Analyze: this browser edits", func(ctx context.Context) error {
			if _, err := chromedp.Run(ctx, chromedp.Click(chromedp.CSS(`[data-testid="analyze-`+movie+`"]`))); err != nil {
				return err
			}
			return until(ctx, banner+`?.dataset.mode === 'edit' && !document.querySelector('#start-trace').disabled`)
		}},
		{"place a marker", func(ctx context.Context) error {
			before, err := eval[int](ctx, `document.querySelectorAll('#markers li').length`)
			if err != nil {
				return err
			}
			if _, err := chromedp.Run(ctx, chromedp.Click(chromedp.ID("player"))); err != nil {
				return err
			}
			return until(ctx, `document.querySelectorAll('#markers li').length > `+strconv.Itoa(before))
		}},
		{"start the trace", func(ctx context.Context) error {
			if _, err := chromedp.Run(ctx, chromedp.Click(chromedp.ID("start-trace"))); err != nil {
				return err
			}
			return until(ctx, `!document.querySelector('#progress-panel').hidden || document.querySelector('#movie-status').dataset.status === 'traced'`)
		}},
		{"the trace completes and its results load", func(context.Context) error {
			ctx, cancel := context.WithTimeout(w.ctx, w.o.TraceTimeout)
			defer cancel()
			if err := until(ctx, `['traced', 'tracing_failed'].includes(document.querySelector('#movie-status').dataset.status)`); err != nil {
				return err
			}
			if st, _ := eval[string](ctx, `document.querySelector('#movie-status').dataset.status`); st != "traced" {
				return fmt.Errorf("the trace ended %s: %s", st, mustText(ctx))
			}
			return until(ctx, `+document.querySelector('#results').dataset.count > 0`)
		}},
		{"leave Analyze: the lease is released", func(ctx context.Context) error {
			if _, err := chromedp.Run(ctx, chromedp.Click(chromedp.ID("back"))); err != nil {
				return err
			}
			return until(ctx, lock()+`?.dataset.kind === ""`)
		}},
		{"rename its own movie from the list", func(ctx context.Context) error {
			if !own {
				return nil
			}
			return w.renameOwnMovie(ctx, movie)
		}},
		{"delete its own movie from the list, after the confirmation", func(ctx context.Context) error {
			if !own {
				return nil
			}
			return w.deleteOwnMovie(ctx, movie)
		}},
		{"sign out", func(ctx context.Context) error {
			if _, err := chromedp.Run(ctx, chromedp.Click(chromedp.CSS(`[data-testid="sign-out"]`))); err != nil {
				return err
			}
			return until(ctx, `location.origin === '`+w.origin+`' && document.querySelector('[data-testid="auth-user"]')?.textContent === 'not signed in'`)
		}},
	}
	for _, s := range steps {
		if err := w.step(s.what, s.f); err != nil {
			return err
		}
	}
	return nil
}

func mustText(ctx context.Context) string {
	s, _ := eval[string](ctx, `document.body ? document.body.innerText.slice(0, 500) : ''`)
	return s
}

// signIn presses Sign in and completes the provider's page: the local
// provider's user button, or Cognito managed login's username and password
// fields (one or two screens), until the page is back and signed in.
func (w *walker) signIn(ctx context.Context) error {
	if _, err := chromedp.Run(ctx, chromedp.Click(chromedp.CSS(`[data-testid="sign-in"]`))); err != nil {
		return err
	}
	if w.o.Login != "" {
		if err := until(ctx, `!!document.querySelector('[data-testid="login-`+w.o.Login+`"]')`); err != nil {
			return err
		}
		if _, err := chromedp.Run(ctx, chromedp.Click(chromedp.CSS(`[data-testid="login-`+w.o.Login+`"]`))); err != nil {
			return err
		}
	} else {
		if err := until(ctx, `!!document.querySelector('input[name="username"]')`); err != nil {
			return err
		}
		if _, err := chromedp.Run(ctx, chromedp.SendKeys(chromedp.CSS(`input[name="username"]`), w.o.Username)); err != nil {
			return err
		}
		if has, _ := eval[bool](ctx, `!!document.querySelector('input[name="password"]')`); !has {
			if _, err := chromedp.Run(ctx, chromedp.Click(chromedp.CSS(`button[type="submit"]`))); err != nil {
				return err
			}
			if err := until(ctx, `!!document.querySelector('input[name="password"]')`); err != nil {
				return err
			}
		}
		if _, err := chromedp.Run(ctx, chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), w.o.Password)); err != nil {
			return err
		}
		if _, err := chromedp.Run(ctx, chromedp.Click(chromedp.CSS(`button[type="submit"]`))); err != nil {
			return err
		}
	}
	return until(ctx, `location.origin === '`+w.origin+`' && document.querySelector('[data-testid="auth-user"]')?.textContent.startsWith('signed in as ')`)
}

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// ChromiumPath is Debian's chromium, which .ci/run installs.
const ChromiumPath = "/usr/bin/chromium"

// stepTimeout bounds one step (a wait, a click) of a browser.
const stepTimeout = 30 * time.Second

// tab is one headless Chromium (its own process and fresh profile, so its
// sessionStorage and identity are its own) with one tab.
type tab struct {
	t        *testing.T
	name     string
	ctx      context.Context
	out      string // screenshots
	began    time.Time
	download string // the browser's download folder

	mu      sync.Mutex
	console []string
}

// newTabs starts one browser per name, at the same time.
func newTabs(t *testing.T, out string, names ...string) []*tab {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		t.Fatalf("%s not found (%v): the browser tests need Debian's chromium; .ci/run installs it (apt-get install -y chromium)", ChromiumPath, err)
	}
	tabs := make([]*tab, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { tabs[i], errs[i] = newTab(t, name, out) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return tabs
}

// newTab starts a browser. The flags are the ones this machine's Chromium
// needs as root without a network: no sandbox, no GPU, no QUIC, nothing in
// the background that would call home, and a fresh profile.
func newTab(t *testing.T, name, out string) (*tab, error) {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ChromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
		chromedp.Env("TZ=UTC"),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	b := &tab{t: t, name: name, ctx: ctx, out: out, download: t.TempDir(), began: time.Now()}
	if err := chromedp.Do(ctx); err != nil { // starts the browser, bound to ctx only
		return nil, fmt.Errorf("%s: start chromium: %w", name, err)
	}
	if _, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: b.download, EventsEnabled: new(true),
	}); err != nil {
		return nil, fmt.Errorf("%s: set download folder: %w", name, err)
	}
	// Keep what the page says on its console, for a failure's log.
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, fmt.Sprintf("[%s] %s", m.Type, m.Text))
			b.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		if t.Failed() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if len(b.console) > 0 {
				t.Logf("%s's console:\n  %s", name, strings.Join(b.console, "\n  "))
			}
			t.Logf("%s's address and last requests:\n%s", name, b.requests())
			b.shot(name + "-failure")
		}
	})
	return b, nil
}

func (b *tab) step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, stepTimeout)
}

// activate focuses the element sel and presses Enter on it, as a keyboard
// user does. Unlike chromedp.Click, which clicks the coordinates the element
// had when it was found, it cannot land elsewhere when the layout shifts
// meanwhile (the plots render below Results after the traced frames load).
func (b *tab) activate(what, sel string) {
	b.t.Helper()
	b.do(what, chromedp.Focus(chromedp.CSS(sel)), chromedp.KeyEvent(kb.Enter))
}

// do runs actions, failing the test with what.
//
// The page re-renders the movie list and panels on every metadata poll, so a
// node chromedp has just found can be replaced before the action reaches it
// ("Could not find node with given id"). The action did not happen then, so
// the step is tried again, a bounded number of times.
func (b *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		ctx, cancel := b.step()
		err = chromedp.Do(ctx, actions...)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "Could not find node with given id") {
			break
		}
	}
	if err != nil {
		b.t.Fatalf("%s: %s: %v", b.name, what, err)
	}
}

// waitJS waits until the JavaScript expression is true.
func (b *tab) waitJS(what, expr string) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(stepTimeout))); err != nil {
		b.t.Fatalf("%s: waiting until %s (%s): %v\npage text:\n%s", b.name, what, expr, err, b.text())
	}
}

// eval returns the value of a JavaScript expression (awaiting a promise).
func eval[T any](b *tab, expr string) T {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("%s: evaluate %s: %v", b.name, expr, err)
	}
	return v
}

// requests is the page's address and its last 20 finished requests (the
// resource timing entries: URL path, HTTP status, duration), for a
// failure's log: which call answered what, and how slowly.
func (b *tab) requests() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash + "\n" + performance.getEntriesByType('resource').slice(-20).map((e) =>
		"  " + e.initiatorType + " " + new URL(e.name).pathname + " -> " + e.responseStatus + " in " + Math.round(e.duration) + " ms at " + Math.round(e.startTime) + " ms").join("\n")`))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return s
}

// text is the page's visible text, for failure messages.
func (b *tab) text() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return s
}

// shot saves a full-page PNG screenshot as <out>/<browser>-<name>.png.
func (b *tab) shot(name string) string {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	b.t.Logf("%s: screenshot %s at %s (took %s)", b.name, name, time.Since(b.began).Round(10*time.Millisecond), time.Since(start).Round(10*time.Millisecond))
	if err != nil {
		b.t.Logf("%s: screenshot %s: %v", b.name, name, err)
		return ""
	}
	path := filepath.Join(b.out, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Errorf("save screenshot: %v", err)
	}
	return path
}

// waitFile waits for a completed download named name and returns it.
func (b *tab) waitFile(name string) []byte {
	b.t.Helper()
	deadline := time.Now().Add(stepTimeout)
	path := filepath.Join(b.download, name)
	for {
		if data, err := os.ReadFile(path); err == nil && len(data) > 0 {
			return data
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(b.download)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			b.t.Fatalf("%s: no download %s after %s; the folder holds %v", b.name, name, stepTimeout, names)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

package e2e

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// spyScript runs before the page's own scripts in every document of a
// browser it is installed in: it records the analysis lease IDs the API
// grants (so a test can take a lease away behind the page's back) and
// counts metadata polls and lease renewals (so a test can wait for polls,
// not for time).
const spyScript = `(() => {
  window.__leases = []; window.__polls = 0; window.__beats = 0;
  const f = window.fetch;
  window.fetch = async (input, init) => {
    const url = String(input && input.url || input);
    const method = (init && init.method) || 'GET';
    const res = await f(input, init);
    if (method === 'GET' && /\/movies\/[^/?]+$/.test(url)) window.__polls++;
    if (method === 'PUT' && /\/analysis-lease$/.test(url)) window.__beats++;
    if (method === 'POST' && /\/analysis-lease$/.test(url) && res.status === 201) {
      await res.clone().json().then(b => window.__leases.push(b.leaseId)).catch(() => {});
    }
    return res;
  };
})();`

// spy installs spyScript in b's tab for every document it loads from now.
func (b *tab) spy() {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: spyScript}); err != nil {
		b.t.Fatalf("%s: install the fetch spy: %v", b.name, err)
	}
}

// waitPolls waits until the page has polled the movie n more times.
func (b *tab) waitPolls(n int) {
	b.t.Helper()
	seen := eval[int](b, `window.__polls`)
	b.waitJS(fmt.Sprintf("%d more polls", n), fmt.Sprintf(`window.__polls >= %d`, seen+n))
}

// typeInto empties a field and types value with key events, as a person
// does (the page sees input events).
func (b *tab) typeInto(id, value string) {
	b.t.Helper()
	b.do("type "+value+" into #"+id,
		chromedp.Focus(chromedp.ID(id)),
		chromedp.Evaluate[chromedp.Void](`document.activeElement.value = ''`),
		chromedp.KeyEvent(value))
}

// press focuses an element and presses keys on it: no mouse.
func (b *tab) press(id, keys, what string) {
	b.t.Helper()
	b.do(what, chromedp.Focus(chromedp.ID(id)), chromedp.KeyEvent(keys))
}

func (b *tab) str(expr string) string { b.t.Helper(); return eval[string](b, expr) }

func (b *tab) num(expr string) float64 {
	b.t.Helper()
	s := eval[string](b, `String(`+expr+`)`)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		b.t.Fatalf("%s: %s is %q, not a number", b.name, expr, s)
	}
	return f
}

// activeID is the id of the focused element.
func (b *tab) activeID() string {
	return b.str(`document.activeElement ? document.activeElement.id : ''`)
}

// noInternalWords fails when the page's visible text names an internal
// field or code.
func (b *tab) noInternalWords(where string) {
	b.t.Helper()
	text := b.str(`document.body.innerText`)
	for _, w := range []string{"lease_", "tracing_in_progress", "invalid_input", "not_found", "trim.end", "trim.start",
		"captureInterval", "fromFrame", "markers[", "leaseId", "Lease-Id", "HTTP 4", "HTTP 5", "undefined", "NaN", "[object"} {
		if strings.Contains(text, w) {
			b.t.Errorf("%s: %s: the page says %q:\n%s", b.name, where, w, text)
		}
	}
}

// contrastJS defines contrast(a, b) for two CSS colours (WCAG 2 ratio).
const contrastJS = `const lum = (c) => { const m = c.match(/[\d.]+/g).slice(0, 3).map(Number).map(v => v / 255)
  .map(v => v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4)); return 0.2126 * m[0] + 0.7152 * m[1] + 0.0722 * m[2]; };
const contrast = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };`

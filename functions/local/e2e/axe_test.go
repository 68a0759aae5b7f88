package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/functions/local/emulators"
)

// AxeVersion is the axe-core release the browser tests inject, installed
// from npm into <root>/.tools/axe (gitignored) the first time it is needed.
const AxeVersion = "4.14.1"

var (
	axeOnce   sync.Once
	axeSource string
	axeErr    error
)

// axe returns axe-core's browser bundle, installing it with npm if missing.
func axe(t *testing.T) string {
	t.Helper()
	axeOnce.Do(func() {
		tools, err := emulators.ToolsDir()
		if err != nil {
			axeErr = err
			return
		}
		dir := filepath.Join(tools, "axe")
		file := filepath.Join(dir, "node_modules", "axe-core", "axe.min.js")
		pkg := filepath.Join(dir, "node_modules", "axe-core", "package.json")
		if b, err := os.ReadFile(pkg); err != nil || !strings.Contains(string(b), `"version": "`+AxeVersion+`"`) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			if err := os.MkdirAll(dir, 0o755); err != nil {
				axeErr = err
				return
			}
			out, err := exec.CommandContext(ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund",
				"--no-save", "axe-core@"+AxeVersion).CombinedOutput()
			if err != nil {
				axeErr = fmt.Errorf("npm install axe-core@%s: %w\n%s", AxeVersion, err, out)
				return
			}
		}
		b, err := os.ReadFile(file)
		axeSource, axeErr = string(b), err
	})
	if axeErr != nil {
		t.Fatalf("axe-core: %v", axeErr)
	}
	return axeSource
}

// axeViolation is what the test reports of one axe-core violation.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// checkAxe injects axe-core into the page and runs it on the whole
// document (WCAG 2.0, 2.1 and 2.2 A and AA rules, target-size included, and
// axe's best practices); any violation
// fails the test. The page is screenshotted first as <view>.
func (b *tab) checkAxe(view string) {
	b.t.Helper()
	b.shot(view)
	vs := b.axeRun(view)
	for _, v := range vs {
		b.t.Errorf("%s: axe-core on the %s view: %s (%s): %s, at %v", b.name, view, v.ID, v.Impact, v.Help, v.Nodes)
	}
	b.t.Logf("%s: axe-core %s on the %s view: %d violations", b.name, AxeVersion, view, len(vs))
}

// axeRun runs axe-core on the page and returns its violations.
func (b *tab) axeRun(view string) []axeViolation {
	b.t.Helper()
	src := axe(b.t)
	ctx, cancel := b.step()
	defer cancel()
	// The source is evaluated as DevTools evaluates a console line, which
	// the page's Content-Security-Policy (no eval) does not govern.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](src+"\n;!!window.axe")); err != nil {
		b.t.Fatalf("%s: inject axe-core: %v", b.name, err)
	}
	// axe's default rules (WCAG 2.0 and 2.1 A and AA, best practices) and
	// WCAG 2.2 AA: its one rule, target-size (2.5.8), is off by default.
	res, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {resultTypes: ['violations'], rules: {'target-size': {enabled: true}}}).then(r => {
		const ran = [...r.violations, ...r.passes, ...r.incomplete, ...r.inapplicable].map(x => x.id);
		if (!ran.includes('target-size')) throw new Error('axe did not run target-size (WCAG 2.2 AA)');
		return JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map(n => n.target.join(' '))})));
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("%s: run axe-core on %s: %v", b.name, view, err)
	}
	var vs []axeViolation
	if err := json.Unmarshal([]byte(res), &vs); err != nil {
		b.t.Fatalf("%s: axe-core result: %v", b.name, err)
	}
	return vs
}

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/local/stack"
)

// TestDefectsOfIssue15 has one subtest per defect of issue 15, each on its
// own movie of one shared stack and with its own browsers, each checking
// what a user of that defect saw. They drive the page through controls the
// page had before the fixes too (the list's Analyze links, #from-frame,
// #capture-interval, #trim-end, #start-trace, the save button, #back), so
// that with E2E_PAGE_DIR set to the page of before the fixes each subtest
// runs up to its defect's check and fails there (docs/page-tests.md has the
// table). The scenarios (TestTwoBrowsersEditViewTraceAndReopen,
// TestPhoneKeyboardOnly) check the same defects along a user's path.
func TestDefectsOfIssue15(t *testing.T) {
	out := outputDir(t)
	movie := func(id string, frames, interval int, marker bool) domain.Movie {
		m, err := domain.NewMovie(id, "Defect movie "+id, frames, 30, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if interval > 1 {
			m.Settings.CaptureInterval = interval
		}
		if marker {
			m.Settings.Markers = []domain.Marker{{ID: "m1", Label: "Target", X: 0.3, Y: 0.6}}
		}
		return m
	}
	movies := []domain.Movie{
		movie("d01-a", 60, 1, true), movie("d01-b", 60, 1, true), movie("d02", 40, 1, true), movie("d03", 40, 1, true),
		movie("d04", 40, 1, true), movie("d05", 40, 1, false), movie("d06", 40, 1, true), movie("d07", 40, 1, true),
		movie("d08", 600, 1, true), movie("d09", 600, 1, true), movie("d10", 100, 1, true), movie("d11", 40, 2, true),
		movie("d12", 40, 1, true), movie("d13", 40, 1, true), movie("d14", 600, 1, true),
	}
	st := startStackWith(t, out, func(o *stack.Options) {
		o.Movies, o.FailAt = movies, map[string]int{"d10": failFrame}
	})
	for _, d := range defectChecks {
		t.Run(d.name, func(t *testing.T) { d.run(t, st) })
	}
}

type defectCheck struct {
	name string // "NN-what"
	run  func(t *testing.T, st *stack.Stack)
}

// defectChecks are the subtests, in the issue's order.
var defectChecks = []defectCheck{
	{"01-from-frame-carries-over", defect01}, {"02-last-trace-range", defect02}, {"03-unsaved-interval-ignored", defect03},
	{"04-unknown-movie", defect04}, {"05-markers-by-keyboard", defect05}, {"06-message-moves-canvas", defect06},
	{"07-phone-width", defect07}, {"08-you-and-another-tab", defect08}, {"09-downloads-say-what-they-hold", defect09},
	{"10-failed-trace-numbers", defect10}, {"11-list-progress-of-the-movie", defect11}, {"12-holder-activity-and-lost-lease", defect12},
	{"13-errors-next-to-their-field", defect13}, {"14-focus-contrast-names-announcements", defect14},
}

// becomes polls expr until it is true, at most one step's time, and says
// whether it became true (a check; waitJS is for a step that must happen).
func (b *tab) becomes(expr string) bool {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(stepTimeout)))
	return err == nil
}

// openMovie signs in (when not yet) and opens the movie from the list.
func openMovie(b *tab, st *stack.Stack, name, id string) {
	b.t.Helper()
	signIn(b, st.URL, name)
	openFromList(b, id)
}

// openFromList clicks the movie's Analyze link in the list and waits until
// the page edits it or shows it view-only.
func openFromList(b *tab, id string) {
	b.t.Helper()
	b.waitJS("the list shows "+id, `!!document.querySelector('[data-testid="analyze-`+id+`"]')`)
	b.do("open "+id, chromedp.Click(chromedp.CSS(`[data-testid="analyze-`+id+`"]`)))
	b.waitJS(id+" is open", `document.querySelector('#movie-title').textContent === 'Defect movie `+id+`' && ['edit', 'view'].includes(`+banner+`.dataset.mode)`)
}

func waitEditing(b *tab) {
	b.t.Helper()
	b.waitJS("editing", banner+`.dataset.mode === 'edit' && !document.querySelector('#start-trace').disabled`)
}

// saveButton is the settings' save button: one form now (#save-settings),
// the trim's own button before (#save-trim).
const saveButton = `#save-settings, #save-trim`

// defect 1: "From frame" carries over from the previously opened movie.
func defect01(t *testing.T, st *stack.Stack) {
	b := newTabs(t, outputDir(t), "alice")[0]
	openMovie(b, st, "Alice", "d01-a")
	waitEditing(b)
	b.typeInto("from-frame", "37")
	b.do("back to the list", chromedp.Click(chromedp.ID("back")))
	openFromList(b, "d01-b")
	waitEditing(b)
	if got := b.str(`document.querySelector('#from-frame').value`); got != "0" {
		t.Errorf("the second movie's From frame shows %q, carried over from the first movie; want 0", got)
	}
	// ... and the job records what the screen shows.
	b.do("start the trace", chromedp.Click(chromedp.ID("start-trace")))
	b.waitJS("traced", `document.querySelector('#movie-status').dataset.status === 'traced'`)
	if j := getMovie(t, st, "d01-b").LastJob; j == nil {
		t.Error("the second movie has no last trace")
	} else if j.FromFrame != 0 {
		t.Errorf("the second movie's trace was recorded from frame %d; want 0", j.FromFrame)
	}
}

// defect 2: the last trace says "from frame N" (the requested start), not
// the frames traced. A first trace asked to start at 30 traces 0-39.
func defect02(t *testing.T, st *stack.Stack) {
	b := newTabs(t, outputDir(t), "alice")[0]
	openMovie(b, st, "Alice", "d02")
	waitEditing(b)
	b.typeInto("from-frame", "30")
	b.do("start the trace", chromedp.Click(chromedp.ID("start-trace")))
	b.waitJS("traced", `document.querySelector('#movie-status').dataset.status === 'traced' && !document.querySelector('#job-panel').hidden`)
	if m := getMovie(t, st, "d02"); m.LastJob == nil || m.LastJob.Frames != 40 {
		t.Fatalf("the trace asked to start at 30 traced %+v; the test expects frames 0-39", m.LastJob)
	}
	// The job panel can show before its range does (a fresh CI run read
	// "Complete: 40 frames traced by you" once): wait a step for the range.
	b.becomes(`document.querySelector('#last-job').textContent.includes('frames 0 to 39')`)
	job := b.str(`document.querySelector('#last-job').textContent`)
	if !strings.Contains(job, "frames 0 to 39") || strings.Contains(job, "from frame 30") {
		t.Errorf("the last trace says %q; want the frames traced (0 to 39), not the requested start", job)
	}
}

// defect 3: an unsaved capture interval is ignored by Start trace while
// the field keeps showing it.
func defect03(t *testing.T, st *stack.Stack) {
	b := newTabs(t, outputDir(t), "alice")[0]
	openMovie(b, st, "Alice", "d03")
	waitEditing(b)
	b.typeInto("capture-interval", "2")
	b.do("start the trace", chromedp.Click(chromedp.ID("start-trace")))
	var m = getMovie(t, st, "d03")
	waitFor(t, "the trace has its plan", func() bool { m = getMovie(t, st, "d03"); return m.LastJob != nil || m.Progress.TotalFrames > 0 })
	if m.CaptureInterval != 2 || (m.Progress.TotalFrames != 20 && (m.LastJob == nil || m.LastJob.Frames != 20)) {
		t.Errorf("the screen said every 2nd frame; the trace runs with interval %d over %d frames (last job %+v)", m.CaptureInterval, m.Progress.TotalFrames, m.LastJob)
	}
}

// defect 4: an unknown movie's URL shows the previous movie or an empty
// editor with enabled buttons; want a not-found page.
func defect04(t *testing.T, st *stack.Stack) {
	b := newTabs(t, outputDir(t), "alice")[0]
	openMovie(b, st, "Alice", "d04")
	waitEditing(b)
	b.do("go to an unknown movie", chromedp.Navigate(st.URL+"#/movies/no-such-movie"))
	notFound := `[...document.querySelectorAll('h1, h2')].some(h => h.offsetParent !== null && /not found/i.test(h.textContent))`
	controls := `[...document.querySelectorAll('#analyze-view button, #analyze-view input')].filter(e => e.offsetParent !== null && !e.disabled).length`
	if !b.becomes(notFound + ` && ` + controls + ` === 0`) {
		t.Errorf("an unknown movie shows %d enabled Analyze controls and no not-found heading:\n%s", eval[int](b, controls), b.text())
	}
}

// defect 5: markers cannot be placed, moved or removed without a mouse.
// From the top of the page, Tab to a control that adds a marker, press Enter,
// move it with the arrow keys and remove it with Delete.
func defect05(t *testing.T, st *stack.Stack) {
	b := newTabs(t, outputDir(t), "carol")[0]
	openMovie(b, st, "Carol", "d05")
	waitEditing(b)
	// From the top of the document: nothing focused.
	eval[bool](b, `(document.activeElement && document.activeElement.blur(), true)`)
	found := false
	for range 80 {
		b.do("Tab", chromedp.KeyEvent(kb.Tab))
		if eval[bool](b, `(e => !!e && /add( a)? marker/i.test(e.textContent + ' ' + (e.getAttribute('aria-label') || '')))(document.activeElement)`) {
			found = true
			break
		}
	}
	if !found {
		t.Fatal("no control that adds a marker within 80 presses of Tab from the top of the page: markers need a mouse")
	}
	b.do("press Enter", chromedp.KeyEvent(kb.Enter))
	waitFor(t, "the marker is saved", func() bool { return len(getMovie(t, st, "d05").Markers) == 1 })
	// The page hands the focus to the frame once it has the saved marker
	// (the store can answer before the page has): the arrows act there.
	b.waitJS("the frame has the focus", `document.activeElement === document.querySelector('#player')`)
	x := getMovie(t, st, "d05").Markers[0].X
	b.do("press the right arrow twice", chromedp.KeyEvent(kb.ArrowRight+kb.ArrowRight))
	waitFor(t, "the marker moves right", func() bool { m := getMovie(t, st, "d05").Markers; return len(m) == 1 && m[0].X > x })
	b.do("press Delete", chromedp.KeyEvent(kb.Delete))
	waitFor(t, "the marker is removed", func() bool { return len(getMovie(t, st, "d05").Markers) == 0 })
}

// defect 6: a message pushes the frame down, so the next click lands in the
// wrong place; messages never clear.
func defect06(t *testing.T, st *stack.Stack) {
	b := newTabs(t, outputDir(t), "alice")[0]
	openMovie(b, st, "Alice", "d06")
	waitEditing(b)
	top := b.num(`document.querySelector('#player').getBoundingClientRect().top + scrollY`)
	b.do("save the settings", chromedp.Click(chromedp.CSS(saveButton)))
	b.waitJS("a message shows", `document.querySelector('#message').textContent !== ''`)
	if now := b.num(`document.querySelector('#player').getBoundingClientRect().top + scrollY`); now != top {
		t.Errorf("the message moved the frame from %v to %v px", top, now)
	}
	if !b.becomes(`document.querySelector('#message').textContent === '' || document.querySelector('#message').hidden`) {
		t.Errorf("the message %q did not clear", b.str(`document.querySelector('#message').textContent`))
	}
}

// defect 7: at 390 px the list is wider than the screen and Analyze is off
// it.
func defect07(t *testing.T, st *stack.Stack) {
	b := newTabs(t, outputDir(t), "carol-phone")[0]
	b.do("a 390 px viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	signIn(b, st.URL, "Carol")
	b.waitJS("the list shows the movie", `!!document.querySelector('[data-testid="analyze-d07"]')`)
	if w := b.num(`Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)`); w > 390 {
		t.Errorf("the list is %v px wide on a 390 px screen", w)
	}
	openFromList(b, "d07")
	if w, r := b.num(`Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)`), b.num(`document.querySelector('#player').getBoundingClientRect().right`); w > 390 || r > 390 {
		t.Errorf("Analyze is %v px wide, the frame's right edge at %v px, on a 390 px screen", w, r)
	}
}

// defect 8: the user who started the trace is told "View only: a trace
// started by Alice"; the same user's second tab "Alice has been editing".
func defect08(t *testing.T, st *stack.Stack) {
	tabs := newTabs(t, outputDir(t), "alice", "alice-second-window")
	alice, second := tabs[0], tabs[1]
	openMovie(alice, st, "Alice", "d08")
	waitEditing(alice)
	openMovie(second, st, "Alice", "d08")
	if !second.becomes(banner + `.textContent.includes('another tab')`) {
		t.Errorf("Alice's second window says %q; want it to say it is another tab of hers", second.str(banner+`.textContent`))
	}
	alice.do("start the trace", chromedp.Click(chromedp.ID("start-trace")))
	alice.waitJS("tracing", `document.querySelector('#movie-status').dataset.status === 'tracing'`)
	if !alice.becomes(banner + `.textContent.startsWith('You started this trace')`) {
		t.Errorf("the user who started the trace is told %q", alice.str(banner+`.textContent`))
	}
}

// defect 9: downloads with no trace, or during a trace, look complete.
func defect09(t *testing.T, st *stack.Stack) {
	b := newTabs(t, outputDir(t), "alice")[0]
	openMovie(b, st, "Alice", "d09")
	waitEditing(b)
	csv := `document.querySelector('#download-csv')`
	if !eval[bool](b, csv+`.disabled || /nothing|no trace|not traced/i.test(`+csv+`.textContent)`) {
		t.Errorf("with nothing traced the CSV download is enabled and says %q", b.str(csv+`.textContent`))
	}
	b.do("start the trace", chromedp.Click(chromedp.ID("start-trace")))
	b.waitJS("tracing", `document.querySelector('#movie-status').dataset.status === 'tracing'`)
	if !b.becomes(`/partial/i.test(` + csv + `.textContent)`) {
		t.Errorf("during the trace the CSV download says %q; want it to say the frames are partial", b.str(csv+`.textContent`))
	}
}

// defect 10: a failed trace's numbers disagree, with no next step.
func defect10(t *testing.T, st *stack.Stack) {
	b := newTabs(t, outputDir(t), "bob")[0]
	openMovie(b, st, "Bob", "d10")
	waitEditing(b)
	b.do("start the trace", chromedp.Click(chromedp.ID("start-trace")))
	b.waitJS("the failure is shown", `!document.querySelector('#failure-summary').hidden && +document.querySelector('#results').dataset.count > 0`)
	n := eval[int](b, `+document.querySelector('#results').dataset.count`)
	last := n - 1
	job, summary := b.str(`document.querySelector('#last-job').textContent`), b.str(`document.querySelector('#failure-summary').textContent`)
	if !strings.Contains(job, fmt.Sprintf("%d frames (frames 0 to %d)", n, last)) || !strings.Contains(summary, fmt.Sprintf("Nothing after frame %d was saved", last)) {
		t.Errorf("the results hold %d frames (0 to %d); the last trace says %q and the summary %q", n, last, job, summary)
	}
	if !b.becomes(`[...document.querySelectorAll('#analyze-view p, #analyze-view div')].some(e => e.offsetParent !== null && /Retrace/.test(e.textContent) && /next|try|again/i.test(e.textContent))`) {
		t.Error("a failed trace offers no next step (retrace)")
	}
}

// defect 11: the list's progress is the last job's ("20 / 20" for a
// 40-frame movie traced every 2nd frame), not the movie's.
func defect11(t *testing.T, st *stack.Stack) {
	b := newTabs(t, outputDir(t), "alice")[0]
	openMovie(b, st, "Alice", "d11")
	waitEditing(b)
	b.do("start the trace", chromedp.Click(chromedp.ID("start-trace")))
	b.waitJS("traced", `document.querySelector('#movie-status').dataset.status === 'traced'`)
	b.do("back to the list", chromedp.Click(chromedp.ID("back")))
	progress := `document.querySelector('[data-testid="progress-d11"]').textContent`
	b.waitJS("the list shows the trace's outcome", progress+` !== 'Not traced yet' && `+progress+` !== ''`)
	if !b.becomes(`/\b20\b.*\b40\b/.test(` + progress + `)`) {
		t.Errorf("the list's progress says %q; want the 20 traced frames of the movie's 40", b.str(progress))
	}
}

// defect 12: viewers cannot tell whether the holder is still there; an
// editor whose lease was lost still sees "You are editing" until the next
// heartbeat.
func defect12(t *testing.T, st *stack.Stack) {
	tabs := newTabs(t, outputDir(t), "alice", "bob")
	alice, bob := tabs[0], tabs[1]
	alice.spy()
	openMovie(alice, st, "Alice", "d12")
	waitEditing(alice)
	openMovie(bob, st, "Bob", "d12")
	bob.waitJS("Bob is view-only", banner+`.dataset.mode === 'view'`)
	if !bob.becomes(`(t => /last active/i.test(t) && /(lapses|expires)/i.test(t))(document.querySelector('#analyze-view').innerText)`) {
		t.Errorf("Bob's page does not say when Alice was last active and when her lock lapses:\n%s", bob.text())
	}
	// Alice's lease is released behind her page's back just after a
	// renewal; two metadata polls later (well before the next renewal, a
	// third of the lease away) her page says so.
	beats := eval[int](alice, `window.__beats`)
	alice.waitJS("a renewal", fmt.Sprintf(`window.__beats > %d`, beats))
	leases := eval[[]string](alice, `window.__leases`)
	releaseLease(t, st, "d12", leases[len(leases)-1])
	alice.waitPolls(2)
	if got := alice.str(`document.querySelector('#analyze-view').innerText`); !strings.Contains(got, "no longer editing") {
		t.Errorf("two polls after her lease was taken, Alice's page does not say she is no longer editing; its banner: %q", alice.str(banner+`.textContent`))
	}
}

// defect 13: errors are far from their field, with no aria-invalid, in
// words of developers.
func defect13(t *testing.T, st *stack.Stack) {
	b := newTabs(t, outputDir(t), "bob")[0]
	openMovie(b, st, "Bob", "d13")
	waitEditing(b)
	b.typeInto("trim-end", "100000")
	b.do("save the settings", chromedp.Click(chromedp.CSS(saveButton)))
	next := `(() => { const f = document.querySelector('#trim-end'); const ids = (f.getAttribute('aria-describedby') || '').split(/\s+/).filter(Boolean);
		return f.getAttribute('aria-invalid') === 'true' && ids.some(id => { const e = document.getElementById(id); return e && e.offsetParent !== null && e.textContent.trim() !== ''; }); })()`
	if !b.becomes(next) {
		t.Errorf("the refused trim end is not marked aria-invalid with its error next to it; the page says:\n%s", b.text())
	}
	b.noInternalWords("after a refused trim")
}

// defect 14: focus lost on route changes and when Start trace disables
// itself; focus ring below 3:1; an unnamed progress bar; the live banner
// re-announced on every poll.
func defect14(t *testing.T, st *stack.Stack) {
	b := newTabs(t, outputDir(t), "alice")[0]
	b.spy()
	signIn(b, st.URL, "Alice")
	b.waitJS("the list shows the movie", `!!document.querySelector('[data-testid="analyze-d14"]')`)
	b.do("open d14", chromedp.Click(chromedp.CSS(`[data-testid="analyze-d14"]`)))
	waitEditing(b)
	if !b.becomes(`document.activeElement && document.activeElement.id === 'movie-title'`) {
		t.Errorf("after opening Analyze the focus is on %q, want the movie's title", b.activeID())
	}
	b.do("focus From frame", chromedp.Focus(chromedp.ID("from-frame")))
	ring := eval[float64](b, `(() => { `+contrastJS+` const s = getComputedStyle(document.activeElement);
		return s.outlineStyle === 'none' ? 0 : contrast(s.outlineColor, 'rgb(255, 255, 255)'); })()`)
	if ring < 3 {
		t.Errorf("the focus ring's contrast is %.2f, want at least 3", ring)
	}
	eval[bool](b, `(window.__mutations = 0, new MutationObserver(ms => window.__mutations += ms.length).observe(`+banner+`, {childList: true, subtree: true, characterData: true}), true)`)
	b.waitPolls(3)
	if n := eval[int](b, `window.__mutations`); n != 0 {
		t.Errorf("the live banner changed %d times in three polls that changed nothing", n)
	}
	b.do("start the trace", chromedp.Click(chromedp.ID("start-trace")))
	b.waitJS("tracing", `document.querySelector('#movie-status').dataset.status === 'tracing' && document.querySelector('#start-trace').disabled`)
	if !b.becomes(`document.activeElement !== document.body && document.activeElement.offsetParent !== null`) {
		t.Error("when Start trace disabled itself the focus was lost (on the body)")
	}
	if name := b.str(`(p => p.getAttribute('aria-label') || (p.labels && p.labels.length ? p.labels[0].textContent : '') || (p.getAttribute('aria-labelledby') || ''))(document.querySelector('#progress-bar'))`); name == "" {
		t.Error("the progress bar has no accessible name")
	}
}

// Package e2e drives the Analyze page in headless Chromium browsers
// (Debian's chromium through chromedp) against the local stack, started
// in-process exactly as `make run` starts it, on the emulators `make test`
// provides. Screenshots go to testoutput/e2e/<test>/ at the repository root.
//
// The comments "defect N" name the defects of issue 15 each check covers.
package e2e

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
)

const (
	movieID    = "e2e-movie"
	failingID  = "e2e-damaged" // its trace fails at failFrame
	failFrame  = 20
	frameCount = 600
	interval   = 2 // Alice's capture interval: 300 frames to trace
	wantFrames = frameCount / interval
)

const (
	banner   = `document.querySelector('#lease-banner')`
	detail   = `document.querySelector('#lease-detail')`
	written  = `+document.querySelector('#progress-text').dataset.written`
	progress = `!document.querySelector('#progress-panel').hidden && ` + written + ` > 0`
	holds    = `document.querySelector('#downloads-note').dataset.holds`
)

// TestTwoBrowsersEditViewTraceAndReopen: Alice edits; Bob, in another
// browser, is view-only with Alice's name, start time, last activity and
// expiry, while playback and downloads work; Alice starts a trace with the
// settings on her screen and both see its progress; Alice leaves mid-trace,
// reopens and still sees progress; the results load in both; Alice's lease
// is taken away and her page says so; Bob's trace of another movie fails and
// the page's numbers agree.
func TestTwoBrowsersEditViewTraceAndReopen(t *testing.T) {
	began := time.Now()
	out := outputDir(t)
	st := startStack(t, out)
	tabs := newTabs(t, out, "alice", "bob")
	alice, bob := tabs[0], tabs[1]
	alice.spy()
	bob.spy()
	t.Logf("stack and two browsers up in %s", time.Since(began).Round(time.Millisecond))

	lockOf := `document.querySelector('[data-testid="lock-` + movieID + `"]')`
	progressOf := `document.querySelector('[data-testid="progress-` + movieID + `"]').textContent`
	analyzeLink := chromedp.CSS(`[data-testid="analyze-` + movieID + `"]`)

	signIn(alice, st.URL, "Alice")
	alice.waitJS("the list shows the movie, free", lockOf+`?.dataset.kind === ""`)
	alice.checkAxe("01-alice-list")
	alice.do("open Analyze", chromedp.Click(analyzeLink))
	alice.waitJS("Alice holds the lease", banner+`.dataset.mode === 'edit' && !document.querySelector('#start-trace').disabled`)
	if id := alice.activeID(); id != "movie-title" { // defect 14
		t.Errorf("after opening Analyze the focus is on %q, want the movie's title", id)
	}
	if got := alice.str(holds); got != "none" || !eval[bool](alice, `document.querySelector('#download-csv').disabled`) { // defect 9
		t.Errorf("with nothing traced the downloads hold %q (disabled: %v)", got, eval[bool](alice, `document.querySelector('#download-csv').disabled`))
	}

	// Defect 13: the API refuses a trace without markers; the error sits
	// next to the markers, in words a person uses.
	alice.do("start a trace without markers", chromedp.Click(chromedp.ID("start-trace")))
	alice.waitJS("the markers error shows", `!document.querySelector('#markers-error').hidden`)
	if got := alice.str(`document.querySelector('#markers-error').textContent`); !strings.Contains(got, "Place at least one marker") {
		t.Errorf("the markers error says %q", got)
	}
	alice.noInternalWords("after a refused trace")

	// Defect 1: a start frame typed on one movie does not follow Alice to
	// the next one.
	alice.typeInto("from-frame", "37")
	alice.do("back to the list", chromedp.Click(chromedp.ID("back")))
	alice.waitJS("the list has the focus", `document.activeElement.id === 'list-title'`) // defect 14
	alice.do("open the other movie", chromedp.Click(chromedp.CSS(`[data-testid="analyze-`+failingID+`"]`)))
	alice.waitJS("the other movie is open", `document.querySelector('#movie-title').textContent === 'Damaged end-to-end movie' && `+banner+`.dataset.mode === 'edit'`)
	if got := alice.str(`document.querySelector('#from-frame').value`); got != "0" {
		t.Errorf("the other movie's start frame shows %q, carried over from the first movie", got)
	}
	alice.do("back to the list", chromedp.Click(chromedp.ID("back")))
	alice.waitJS("the list has the focus again", `document.activeElement.id === 'list-title'`)
	// Focus and Enter, not a click: the list's rows are re-rendered by its
	// poll, and a click lands on the coordinates the link had when found.
	alice.activate("open Analyze again", `[data-testid="analyze-`+movieID+`"]`)
	alice.waitJS("Alice edits again", banner+`.dataset.mode === 'edit' && document.querySelector('#movie-title').textContent === 'End-to-end movie'`)
	if got := alice.str(`document.querySelector('#from-frame').value`); got != "0" {
		t.Errorf("reopened, the start frame shows %q", got)
	}
	alice.do("place a marker on the frame", chromedp.Click(chromedp.ID("player")))
	alice.waitJS("the marker is saved", `document.querySelectorAll('#markers li').length === 1`)
	m := getMovie(t, st, movieID)
	if len(m.Markers) != 1 || m.Lock == nil || m.Lock.Kind != domain.LeaseAnalysis || m.Lock.UserName != "Alice" {
		t.Fatalf("after Alice's edit the API shows markers %v, lock %+v", m.Markers, m.Lock)
	}
	alice.checkAxe("02-alice-editing")

	// Bob sees Alice's lock in the list, then a view-only Analyze naming her,
	// when she started, when she was last active and when the lock lapses.
	signIn(bob, st.URL, "Bob")
	bob.waitJS("the list shows Alice's lock", lockOf+`?.dataset.kind === 'analysis' && `+lockOf+`.textContent.includes('Alice editing since')`)
	if got := bob.str(lockOf + `.querySelector('time').dateTime`); got != m.Lock.StartedAt {
		t.Fatalf("the list shows the lock's start as %q, the API says %q", got, m.Lock.StartedAt)
	}
	bob.shot("03-bob-list")
	bob.do("open Analyze", chromedp.Click(analyzeLink))
	bob.waitJS("Bob is view-only", banner+`.dataset.mode === 'view'`)
	if got := bob.str(banner + `.textContent`); !strings.Contains(got, "View only: Alice is editing this movie (since") {
		t.Fatalf("Bob's banner says %q", got)
	}
	if got := bob.str(`document.querySelector('[data-testid="holder-since"]').dateTime`); got != m.Lock.StartedAt {
		t.Fatalf("Bob's banner gives the start as %q, the API says %q", got, m.Lock.StartedAt)
	}
	// Defect 12: the holder's last activity and the lock's expiry.
	bob.waitJS("the detail gives the holder's last activity", `!!`+detail+`.querySelector('[data-testid="holder-active"]') && !!`+detail+`.querySelector('[data-testid="holder-expires"]')`)
	now := getMovie(t, st, movieID).Lock
	active, expires := bob.str(detail+`.querySelector('[data-testid="holder-active"]').dateTime`), bob.str(detail+`.querySelector('[data-testid="holder-expires"]').dateTime`)
	if exp, _ := time.Parse(time.RFC3339, expires); active == "" || exp.Before(time.Now()) || now == nil {
		t.Errorf("Bob's page says Alice was last active %q and the lock lapses %q (API: %+v)", active, expires, now)
	}
	if n := eval[int](bob, `[...document.querySelectorAll('.edit-control')].filter(e => !e.disabled).length`); n != 0 {
		t.Fatalf("%d edit controls are enabled for Bob", n)
	}
	if n := eval[int](bob, `document.querySelectorAll('.edit-control').length`); n < 10 {
		t.Fatalf("only %d edit controls found: the page changed, update the test", n)
	}
	if !eval[bool](bob, `['play', 'frame-slider', 'prev-frame', 'next-frame'].every(id => !document.getElementById(id).disabled)`) {
		t.Fatal("playback is disabled for Bob")
	}
	bob.do("click the frame (places nothing when view-only)", chromedp.Click(chromedp.ID("player")))
	bob.do("play", chromedp.Click(chromedp.ID("play")))
	bob.waitJS("playback advances", `+document.querySelector('#frame-label').textContent >= 10`)
	bob.do("pause", chromedp.Click(chromedp.ID("play")))
	// Defect 14: the live banner is not announced again while nothing changes.
	eval[bool](bob, `(window.__mutations = 0, new MutationObserver(ms => window.__mutations += ms.length).observe(`+banner+`, {childList: true, subtree: true, characterData: true}), true)`)
	bob.waitPolls(3)
	if n := eval[int](bob, `window.__mutations`); n != 0 {
		t.Errorf("the live banner changed %d times in three polls that changed nothing", n)
	}
	// Bob's own write, with his token through the page's sign-in module.
	refused := bob.str(`tracingAuth.fetch('/movies/` + movieID + `/markers', {method: 'PUT', headers: {'Content-Type': 'application/json',
		'Lease-Id': '0123456789abcdef0123456789abcdef'}, body: JSON.stringify({markers: []})}).then(async r => r.status + ' ' + (await r.json()).code)`)
	if refused != "409 lease_held" {
		t.Fatalf("Bob's direct marker write got %q, want 409 lease_held", refused)
	}
	bob.checkAxe("04-bob-view-only")

	// Defect 3: Alice types a capture interval and does not save it; Start
	// trace traces with what her screen shows.
	alice.typeInto("capture-interval", fmt.Sprint(interval))
	alice.waitJS("the form says it is not saved", `document.querySelector('#settings-state').textContent.includes('Not saved')`)
	alice.do("start the trace", chromedp.Click(chromedp.ID("start-trace")))
	alice.waitJS("Alice sees progress", progress)
	if got := getMovie(t, st, movieID); got.CaptureInterval != interval || got.Progress.TotalFrames != wantFrames {
		t.Fatalf("the trace runs with interval %d and %d frames; the screen said %d", got.CaptureInterval, got.Progress.TotalFrames, interval)
	}
	alice.waitJS("the focus moves to the progress", `document.activeElement.id === 'progress-title'`)    // defect 14
	if got := alice.str(banner + `.textContent`); !strings.HasPrefix(got, "You started this trace at") { // defect 8
		t.Errorf("Alice's banner says %q", got)
	}
	if got := alice.str(`document.querySelector('[data-testid="progress-safe"]').textContent`); !strings.Contains(got, "safe to leave this page") {
		t.Fatalf("the progress message says %q", got)
	}
	if got := alice.str(`document.querySelector('#progress-bar').getAttribute('aria-label')`); got == "" { // defect 14
		t.Error("the progress bar has no accessible name")
	}
	alice.checkAxe("05-alice-tracing")
	bob.waitJS("Bob sees progress", progress)
	bob.waitJS("Bob's banner names the trace's starter", banner+`.textContent.includes('View only: Alice started a trace at')`)
	bob.waitJS("Bob's downloads say they are partial", holds+` === 'partial'`) // defect 9
	bob.shot("06-bob-tracing")

	// Alice leaves mid-trace: her pagehide beacon leaves the tracing lease.
	alice.do("leave the page", chromedp.Navigate("about:blank"))
	time.Sleep(300 * time.Millisecond) // let the beacon land
	mid := getMovie(t, st, movieID)
	if mid.Status != domain.StatusTracing || mid.Lock == nil || mid.Lock.Kind != domain.LeaseTracing || mid.Lock.UserName != "Alice" {
		t.Fatalf("after Alice left mid-trace: status %s, lock %+v", mid.Status, mid.Lock)
	}
	if mid.Progress.FramesWritten >= wantFrames {
		t.Fatalf("the trace finished before Alice could reopen Analyze: make the stack's FrameDelay longer")
	}
	// Her tokens are in the tab's sessionStorage: she comes back to the
	// movie signed in (or signs in again, and the provider brings her back).
	signIn(alice, st.URL+"#/movies/"+movieID, "Alice")
	alice.waitJS("the reopened page shows progress", progress)
	seen := eval[int](alice, written)
	alice.shot("07-alice-reopened-mid-trace")
	alice.waitJS("progress goes on", written+` > `+fmt.Sprint(seen)+` || document.querySelector('#movie-status').dataset.status === 'traced'`)

	results := `document.querySelector('#results').dataset.count === '` + fmt.Sprint(wantFrames) + `'`
	alice.waitJS("Alice's page loads the results", results)
	bob.waitJS("Bob's page loads the results", results)
	done := getMovie(t, st, movieID)
	if done.Status != domain.StatusTraced || done.LastJob == nil || done.LastJob.Frames != wantFrames || done.LastJob.FromFrame != 0 {
		t.Fatalf("after the trace: status %s, last job %+v", done.Status, done.LastJob)
	}
	// Defect 2: the last trace's range is the frames it traced.
	lastFrame := frameCount - interval
	wantJob := fmt.Sprintf("Complete: %d frames (frames 0 to %d) traced by you", wantFrames, lastFrame)
	alice.waitJS("Alice's last trace says what was traced", `document.querySelector('#last-job').textContent.startsWith(`+jsString(wantJob)+`)`)
	bob.waitJS("Bob's says Alice traced it", `document.querySelector('#last-job').textContent.includes('traced by Alice')`)
	bob.waitJS("Bob's downloads are complete", holds+` === 'complete'`) // defect 9
	// The history: Alice's trace, its settings and what it traced.
	bob.waitJS("the history shows Alice's completed trace", `[...document.querySelectorAll('[data-testid="history-item"][data-type="completed"]')]
		.some(e => e.textContent.startsWith('Alice\u2019s trace completed at ') && e.textContent.endsWith(': `+fmt.Sprintf("%d frames (frames 0 to %d) traced.", wantFrames, lastFrame)+`'))`)
	if got := bob.str(`document.querySelector('[data-testid="history-item"][data-type="started"]').textContent`); !strings.HasPrefix(got, fmt.Sprintf("Alice started a trace of frames 0 to %d at ", lastFrame)) ||
		!strings.HasSuffix(got, fmt.Sprintf("Settings: frames 0 to %d, every 2nd frame.", frameCount-1)) {
		t.Errorf("the history's start: %q", got)
	}
	alice.waitJS("Alice edits again", banner+`.dataset.mode === 'edit'`)
	bob.waitJS("Bob sees Alice editing again", banner+`.dataset.mode === 'view' && `+banner+`.textContent.includes('Alice is editing')`)
	alice.do("show the last traced frame", chromedp.SetValue(chromedp.ID("frame-slider"), fmt.Sprint(frameCount-2)),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('frame-slider').dispatchEvent(new Event('input'))`))
	alice.shot("08-alice-results")
	bob.activate("open the results table", "#results-details summary")
	bob.checkAxe("09-bob-results-and-history")

	bob.do("download CSV", chromedp.Click(chromedp.ID("download-csv")))
	csvFile := string(bob.waitFile(movieID + "-frames.csv"))
	if !strings.HasPrefix(csvFile, "# movie: ") || !strings.Contains(csvFile, "\n# movieId: "+movieID+"\n") {
		t.Fatalf("CSV download has no header naming the movie: %.300s", csvFile)
	}
	cr := csv.NewReader(strings.NewReader(csvFile))
	cr.Comment = '#'
	rows, err := cr.ReadAll()
	if err != nil || len(rows) != wantFrames+1 || strings.Join(rows[0], ",") != "frame,time,markerId,label,x,y,px,py,confidence,lost,doubt" {
		t.Fatalf("CSV download: %d rows (%v), first %v; want a header and %d rows", len(rows), err, rows[:min(len(rows), 2)], wantFrames)
	}
	bob.do("download JSON", chromedp.Click(chromedp.ID("download-json")))
	var doc struct {
		Holds  string                `json:"holds"`
		Movie  httpapi.DownloadMovie `json:"movie"`
		Frames []httpapi.FrameView   `json:"frames"`
	}
	if err := json.Unmarshal(bob.waitFile(movieID+"-frames.json"), &doc); err != nil || len(doc.Frames) != wantFrames || doc.Holds != "complete" || doc.Movie.ID != movieID {
		t.Fatalf("JSON download: %d frames holding %q (%v), want %d complete", len(doc.Frames), doc.Holds, err, wantFrames)
	}

	// Defect 12: Alice's lease is taken away behind her page's back (its ID
	// released through the beacon route): her page says so at the next poll,
	// not at the next heartbeat: it is taken just after a renewal, and two
	// polls later (the next renewal is a third of the lease away) her page
	// has said so.
	beats := eval[int](alice, `window.__beats`)
	alice.waitJS("a renewal", fmt.Sprintf(`window.__beats > %d`, beats))
	leases := eval[[]string](alice, `window.__leases`)
	releaseLease(t, st, movieID, leases[len(leases)-1])
	alice.waitPolls(2)
	if !eval[bool](alice, banner+`.dataset.mode === 'lost' && `+banner+`.textContent.startsWith('You are no longer editing')`) {
		t.Fatalf("two polls after her lease was taken Alice's banner says %q", alice.str(banner+`.textContent`))
	}
	if n := eval[int](alice, `[...document.querySelectorAll('.edit-control')].filter(e => !e.disabled).length`); n != 0 {
		t.Errorf("%d edit controls stay enabled after Alice lost her lease", n)
	}
	alice.shot("10-alice-lost-lease")
	bob.waitJS("Bob sees nobody editing", banner+`.dataset.mode === 'free' && !document.querySelector('#acquire').hidden`)
	alice.do("start editing again", chromedp.Click(chromedp.ID("acquire")))
	alice.waitJS("Alice edits again", banner+`.dataset.mode === 'edit'`)
	alice.do("close the page", chromedp.Navigate("about:blank"))
	waitFor(t, "Alice's beacon releases her lease", func() bool { return getMovie(t, st, movieID).Lock == nil })

	// Defect 11: the list's progress is the movie's.
	bob.do("back to the list", chromedp.Click(chromedp.ID("back")))
	want := fmt.Sprintf("Done: %d traced frames over the %d frames of the movie", wantFrames, frameCount)
	bob.waitJS("the list gives the movie's progress", progressOf+` === `+jsString(want))
	bob.shot("11-bob-list-after-trace")

	bobFailedTrace(t, bob)
	t.Logf("screenshots in %s; whole test %s", out, time.Since(began).Round(time.Millisecond))
}

// bobFailedTrace: Bob's trace of the damaged movie fails; the page's numbers
// agree with each other and with the results, and a next step is offered
// (defect 10). A setting the page refuses is marked next to its field
// (defect 13).
func bobFailedTrace(t *testing.T, bob *tab) {
	t.Helper()
	bob.do("open the damaged movie", chromedp.Click(chromedp.CSS(`[data-testid="analyze-`+failingID+`"]`)))
	bob.waitJS("Bob edits the damaged movie", banner+`.dataset.mode === 'edit' && !document.querySelector('#start-trace').disabled`)
	bob.typeInto("trim-end", "100000")
	bob.do("start the trace", chromedp.Click(chromedp.ID("start-trace")))
	bob.waitJS("the trim error is next to its field", `document.querySelector('#trim-end').getAttribute('aria-invalid') === 'true' && !document.querySelector('#trim-end-error').hidden`)
	if id := bob.activeID(); id != "trim-end" {
		t.Errorf("after the refusal the focus is on %q, want the refused field", id)
	}
	bob.noInternalWords("after a refused trim")
	bob.shot("12-bob-field-error")
	bob.typeInto("trim-end", "99")
	bob.do("start its trace", chromedp.Click(chromedp.ID("start-trace")))
	bob.waitJS("the failure is shown", `!document.querySelector('#failure-summary').hidden && document.querySelector('#results').dataset.count !== '0'`)
	n := eval[int](bob, `+document.querySelector('#results').dataset.count`)
	last := eval[int](bob, `+document.querySelector('#results').textContent.match(/to (\d+)\)/)[1]`)
	job := bob.str(`document.querySelector('#last-job').textContent`)
	if want := fmt.Sprintf("Failed: the trace you started saved %d frames (frames 0 to %d) before it stopped", n, last); !strings.HasPrefix(job, want) {
		t.Errorf("the last trace says %q, want it to start %q (the results hold %d frames)", job, want, n)
	}
	summary := bob.str(`document.querySelector('#failure-summary').textContent`)
	if want := fmt.Sprintf("Reason: The tracer failed at frame %d (an injected test failure). Nothing after frame %d was saved.", failFrame, last); summary != want {
		t.Errorf("failure summary %q, want %q", summary, want)
	}
	if bob.str(holds) != "failed" || !strings.Contains(bob.str(`document.querySelector('#download-csv').textContent`), "failed trace") { // defect 9
		t.Errorf("a failed trace's downloads hold %q", bob.str(holds))
	}
	bob.waitJS("Bob edits again after his failed trace", banner+`.dataset.mode === 'edit'`)
	bob.waitJS("a next step is offered", `!document.querySelector('#next-step').hidden && document.querySelector('#next-step').textContent.includes('Retrace')`)
	bob.waitJS("the history shows the failure", `[...document.querySelectorAll('[data-testid="history-item"][data-type="failed"]')]
		.some(e => e.textContent.includes(' after saving `+fmt.Sprintf("%d frames (frames 0 to %d). Reason: The tracer failed at frame %d", n, last, failFrame)+`'))`)
	bob.noInternalWords("after a failed trace")
	bob.checkAxe("13-bob-failed-trace")
	bob.do("back to the list", chromedp.Click(chromedp.ID("back")))
	bob.waitJS("the list says what the failed trace saved", `document.querySelector('[data-testid="progress-`+failingID+`"]').textContent.startsWith('Stopped: '+`+fmt.Sprint(n)+`+' of ')`)
}

var jsQuote = regexp.MustCompile(`[\\']`)

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string { return "'" + jsQuote.ReplaceAllString(s, `\$0`) + "'" }

// Package e2e drives the Analyze page in two headless Chromium browsers
// (Debian's chromium through chromedp) against the local stack, started
// in-process exactly as `make run` starts it, on the emulators `make test`
// provides. Screenshots go to testoutput/e2e/ at the repository root.
package e2e

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/emulators"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/testenv"
	"github.com/movietrace/tracinglocks/functions/local/stack"
)

const (
	movieID    = "e2e-movie"
	failingID  = "e2e-damaged" // its trace fails at failFrame
	failFrame  = 20
	frameCount = 600
	interval   = 2 // Alice's capture interval: 300 frames to trace
	wantFrames = frameCount / interval
)

// TestTwoBrowsersEditViewTraceAndReopen is the end-to-end check:
// Alice edits; Bob, in another browser, is view-only with Alice's name and
// start time and disabled edit controls, while playback and downloads work;
// Alice starts a trace and both see its progress; Alice leaves mid-trace,
// reopens Analyze and still sees progress; the results load in both.
func TestTwoBrowsersEditViewTraceAndReopen(t *testing.T) {
	began := time.Now()
	out := outputDir(t)
	st := startStack(t, out)
	t.Logf("stack up in %s", time.Since(began).Round(time.Millisecond))
	tabs := newTabs(t, out, "alice", "bob")
	alice, bob := tabs[0], tabs[1]
	t.Logf("stack and two browsers up in %s", time.Since(began).Round(time.Millisecond))

	lockOf := `document.querySelector('[data-testid="lock-` + movieID + `"]')`
	analyzeLink := chromedp.CSS(`[data-testid="analyze-` + movieID + `"]`)
	banner := `document.querySelector('#lease-banner')`
	written := `+document.querySelector('#progress-text').dataset.written`
	progressShown := `!document.querySelector('#progress-panel').hidden && ` + written + ` > 0`

	// Alice opens the page, picks her name and opens Analyze: she edits.
	signIn(alice, st.URL, "Alice")
	alice.waitJS("the list shows the movie, free", lockOf+`?.dataset.kind === ""`)
	alice.shot("01-alice-list")
	alice.do("open Analyze", chromedp.Click(analyzeLink))
	alice.waitJS("Alice holds the lease", banner+`.dataset.mode === 'edit' && !document.querySelector('#save-trim').disabled`)
	alice.do("place a marker on the frame", chromedp.Click(chromedp.ID("player")))
	alice.waitJS("the marker is saved", `document.querySelectorAll('#markers li').length === 1`)
	alice.do("set the capture interval", chromedp.SetValue(chromedp.ID("capture-interval"), fmt.Sprint(interval)),
		chromedp.Click(chromedp.ID("save-interval")))
	alice.waitJS("the interval is saved", `document.querySelector('#message').textContent === 'Capture interval saved.'`)
	m := getMovie(t, st, movieID)
	if len(m.Markers) != 1 || m.CaptureInterval != interval || m.Lock == nil || m.Lock.Kind != domain.LeaseAnalysis || m.Lock.UserName != "Alice" {
		t.Fatalf("after Alice's edits the API shows markers %v, interval %d, lock %+v", m.Markers, m.CaptureInterval, m.Lock)
	}
	alice.shot("02-alice-editing")

	// Bob sees Alice's lock in the list, then a view-only Analyze naming
	// her and the time she started, with every edit control disabled.
	signIn(bob, st.URL, "Bob")
	bob.waitJS("the list shows Alice's lock", lockOf+`?.dataset.kind === 'analysis' && `+lockOf+`.textContent.includes('Alice editing since')`)
	if got := eval[string](bob, lockOf+`.querySelector('time').dateTime`); got != m.Lock.StartedAt {
		t.Fatalf("the list shows the lock's start as %q, the API says %q", got, m.Lock.StartedAt)
	}
	bob.shot("03-bob-list")
	bob.do("open Analyze", chromedp.Click(analyzeLink))
	bob.waitJS("Bob is view-only", banner+`.dataset.mode === 'view'`)
	if got := eval[string](bob, banner+`.textContent`); !strings.Contains(got, "View only: Alice has been editing since") {
		t.Fatalf("Bob's banner says %q", got)
	}
	if got := eval[string](bob, `document.querySelector('[data-testid="holder-since"]').dateTime`); got != m.Lock.StartedAt {
		t.Fatalf("Bob's banner gives the start as %q, the API says %q", got, m.Lock.StartedAt)
	}
	if n := eval[int](bob, `[...document.querySelectorAll('.edit input, .edit button')].filter(e => !e.disabled).length`); n != 0 {
		t.Fatalf("%d edit controls are enabled for Bob", n)
	}
	if n := eval[int](bob, `document.querySelectorAll('.edit input, .edit button').length`); n < 8 { // trim x3, interval x2, trace x2, marker x2
		t.Fatalf("only %d edit controls found: the page changed, update the test", n)
	}
	if !eval[bool](bob, `['play', 'frame-slider', 'download-json', 'download-csv'].every(id => !document.getElementById(id).disabled)`) {
		t.Fatal("playback or downloads are disabled for Bob")
	}
	bob.do("click the frame (places nothing when view-only)", chromedp.Click(chromedp.ID("player")))
	bob.do("play", chromedp.Click(chromedp.ID("play")))
	bob.waitJS("playback advances", `+document.querySelector('#frame-label').textContent >= 10`)
	bob.do("pause", chromedp.Click(chromedp.ID("play")))
	// The API, not only the page, refuses Bob's writes.
	refused := eval[string](bob, `fetch('/movies/`+movieID+`/markers', {method: 'PUT', headers: {'Content-Type': 'application/json',
		'X-Dev-User': 'dev-bob', 'X-Dev-User-Name': 'Bob', 'Lease-Id': '0123456789abcdef0123456789abcdef'},
		body: JSON.stringify({markers: []})}).then(async r => r.status + ' ' + (await r.json()).code)`)
	if refused != "409 lease_held" {
		t.Fatalf("Bob's direct marker write got %q, want 409 lease_held", refused)
	}
	if m := getMovie(t, st, movieID); len(m.Markers) != 1 {
		t.Fatalf("Bob changed the markers: %v", m.Markers)
	}
	bob.shot("04-bob-view-only")

	// Alice starts the trace; both see its progress.
	alice.do("start the trace", chromedp.Click(chromedp.ID("start-trace")))
	alice.waitJS("Alice sees progress", progressShown)
	if got := eval[string](alice, `document.querySelector('[data-testid="progress-safe"]').textContent`); !strings.Contains(got, "safe to leave this page") {
		t.Fatalf("the progress message says %q", got)
	}
	alice.shot("05-alice-tracing")
	bob.waitJS("Bob sees progress", progressShown)
	bob.waitJS("Bob's banner names the trace's starter", banner+`.textContent.includes('a trace started by Alice is running since')`)
	bob.shot("06-bob-tracing")

	// Alice leaves mid-trace. Her page's pagehide beacon must not touch
	// the tracing lease.
	alice.do("leave the page", chromedp.Navigate("about:blank"))
	time.Sleep(300 * time.Millisecond) // let the beacon land
	mid := getMovie(t, st, movieID)
	if mid.Status != domain.StatusTracing || mid.Lock == nil || mid.Lock.Kind != domain.LeaseTracing || mid.Lock.UserName != "Alice" {
		t.Fatalf("after Alice left mid-trace: status %s, lock %+v", mid.Status, mid.Lock)
	}
	if mid.Progress.FramesWritten >= wantFrames {
		t.Fatalf("the trace finished before Alice could reopen Analyze: make the stack's FrameDelay longer")
	}
	alice.do("reopen Analyze", chromedp.Navigate(st.URL+"#/movies/"+movieID))
	alice.waitJS("the reopened page shows progress", progressShown)
	seen := eval[int](alice, written)
	alice.shot("07-alice-reopened-mid-trace")
	alice.waitJS("progress goes on", written+` > `+fmt.Sprint(seen)+` || document.querySelector('#movie-status').dataset.status === 'traced'`)

	// The results load in both browsers.
	results := `document.querySelector('#results').dataset.count === '` + fmt.Sprint(wantFrames) + `'`
	alice.waitJS("Alice's page loads the results", results)
	bob.waitJS("Bob's page loads the results", results)
	done := getMovie(t, st, movieID)
	if done.Status != domain.StatusTraced || done.LastJob == nil || done.LastJob.Frames != wantFrames || done.LastJob.UserName != "Alice" {
		t.Fatalf("after the trace: status %s, last job %+v", done.Status, done.LastJob)
	}
	// Alice's page goes on editing; Bob's stays view-only.
	alice.waitJS("Alice edits again", banner+`.dataset.mode === 'edit'`)
	bob.waitJS("Bob sees Alice editing again", banner+`.dataset.mode === 'view' && `+banner+`.textContent.includes('Alice has been editing')`)
	alice.do("show the last traced frame", chromedp.SetValue(chromedp.ID("frame-slider"), fmt.Sprint(frameCount-2)),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('frame-slider').dispatchEvent(new Event('input'))`))
	alice.shot("08-alice-results")
	bob.shot("09-bob-results")

	// Bob, view-only, downloads the frames as CSV and as JSON.
	bob.do("download CSV", chromedp.Click(chromedp.ID("download-csv")))
	rows, err := csv.NewReader(strings.NewReader(string(bob.waitFile(movieID + "-frames.csv")))).ReadAll()
	if err != nil || len(rows) != wantFrames+1 || strings.Join(rows[0], ",") != "frame,markerId,x,y,px,py,confidence,lost" {
		t.Fatalf("CSV download: %d rows (%v), first %v; want a header and %d rows", len(rows), err, rows[:min(len(rows), 2)], wantFrames)
	}
	bob.do("download JSON", chromedp.Click(chromedp.ID("download-json")))
	var doc struct {
		Frames []httpapi.FrameView `json:"frames"`
	}
	if err := json.Unmarshal(bob.waitFile(movieID+"-frames.json"), &doc); err != nil || len(doc.Frames) != wantFrames {
		t.Fatalf("JSON download: %d frames (%v), want %d", len(doc.Frames), err, wantFrames)
	}

	// Alice closes her page: the beacon releases her analysis lease.
	alice.do("leave the page", chromedp.Navigate("about:blank"))
	waitFor(t, "Alice's lease is released", func() bool { return getMovie(t, st, movieID).Lock == nil })
	bob.waitJS("Bob sees nobody editing", banner+`.dataset.mode === 'free' && !document.querySelector('#acquire').hidden`)
	bob.shot("10-bob-after-alice-left")

	// Bob edits another movie; its trace fails, and the page shows the
	// failure's safe summary.
	bob.do("back to the list", chromedp.Click(chromedp.ID("back")))
	bob.do("open the damaged movie", chromedp.Click(chromedp.CSS(`[data-testid="analyze-`+failingID+`"]`)))
	bob.waitJS("Bob edits the damaged movie", banner+`.dataset.mode === 'edit' && !document.querySelector('#start-trace').disabled`)
	bob.do("start its trace", chromedp.Click(chromedp.ID("start-trace")))
	bob.waitJS("the failure is shown", `!document.querySelector('#failure-summary').hidden`)
	summary := eval[string](bob, `document.querySelector('#failure-summary').textContent`)
	if want := fmt.Sprintf("Why: The tracer failed at frame %d (an injected test failure).", failFrame); summary != want {
		t.Fatalf("failure summary %q, want %q", summary, want)
	}
	if got := eval[string](bob, `document.querySelector('#movie-status').dataset.status`); got != string(domain.StatusFailed) {
		t.Fatalf("status after the failure: %q", got)
	}
	bob.waitJS("Bob edits again after his failed trace", banner+`.dataset.mode === 'edit'`)
	bob.shot("11-bob-failed-trace")
	// Leaving Analyze inside the page releases the lease with DELETE.
	if l := getMovie(t, st, failingID).Lock; l == nil || l.UserName != "Bob" {
		t.Fatalf("Bob's lease on the damaged movie: %+v", l)
	}
	bob.do("back to the list", chromedp.Click(chromedp.ID("back")))
	waitFor(t, "Bob's lease is released", func() bool { return getMovie(t, st, failingID).Lock == nil })
	t.Logf("screenshots in %s; whole test %s", out, time.Since(began).Round(time.Millisecond))
}

// signIn opens the page and picks the development identity.
func signIn(b *tab, url, name string) {
	b.t.Helper()
	b.do("open the page and pick "+name,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.ID("identity-name")),
		chromedp.SetValue(chromedp.ID("identity-name"), name),
		chromedp.Click(chromedp.ID("identity-use")),
	)
	b.waitJS("signed in as "+name, `document.querySelector('#identity-current').textContent === 'signed in as `+name+`'`)
}

// startStack starts make run's stack in-process on the test's emulators,
// with one movie, a short lease and a slow enough tracer to watch.
func startStack(t *testing.T, out string) *stack.Stack {
	t.Helper()
	ddb, sqs := os.Getenv("DYNAMODB_ENDPOINT"), os.Getenv("SQS_ENDPOINT")
	if ddb == "" || sqs == "" {
		t.Fatal("DYNAMODB_ENDPOINT and SQS_ENDPOINT are not set: run the tests with `make test`")
	}
	movie, err := domain.NewMovie(movieID, "End-to-end movie", frameCount, 30, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	damaged, err := domain.NewMovie(failingID, "Damaged end-to-end movie", 100, 25, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	damaged.Settings.Markers = []domain.Marker{{ID: "m1", Label: "Target", X: 0.3, Y: 0.6}}
	logFile, err := os.Create(filepath.Join(out, "stack.log"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := stack.Start(t.Context(), stack.Options{
		DynamoDBEndpoint: ddb, SQSEndpoint: sqs, Prefix: testenv.UniqueName(t, "e2e"),
		LeaseDuration: 30 * time.Second, FrameDelay: 30 * time.Millisecond, ProgressEvery: 500 * time.Millisecond,
		Movies: []domain.Movie{movie, damaged}, FailAt: map[string]int{failingID: failFrame},
		Log: slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Stop(); err != nil {
			t.Error(err)
		}
		logFile.Close()
	})
	return st
}

// getMovie reads the movie through the API, as a third user.
func getMovie(t *testing.T, st *stack.Stack, id string) httpapi.MovieDetail {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, st.URL+"movies/"+id, nil)
	req.Header.Set(httpapi.HeaderDevUser, "dev-observer")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m httpapi.MovieDetail
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /movies/%s: %s", id, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(stepTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting until %s: timed out after %s", what, stepTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// outputDir is testoutput/e2e at the repository root (gitignored), emptied.
func outputDir(t *testing.T) string {
	t.Helper()
	tools, err := emulators.ToolsDir() // <root>/.tools
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(tools), "testoutput", "e2e")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

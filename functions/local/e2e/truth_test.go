package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/local/stack"
)

// Issue 25, "one truth for counts": after a partial retrace and after a
// cancel, the list, Last trace, Results, History and a download state the
// same number of frames, the number the server stores.
const truthMovie = "t-counts"

func TestOneCountAfterRetraceAndCancel(t *testing.T) {
	out := outputDir(t)
	m, err := domain.NewMovie(truthMovie, "Defect movie "+truthMovie, 300, 30, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "m1", Label: "Target", X: 0.3, Y: 0.6}}
	st := startStackWith(t, out, func(o *stack.Options) {
		o.Movies = []domain.Movie{m}
		// Progress is published every 3 s: a cancel lands between two
		// publications, after frames the last one did not count.
		o.ProgressEvery = 3 * time.Second
	})
	b := newTabs(t, out, "alice")[0]
	openMovie(b, st, "Alice", truthMovie)
	waitEditing(b)
	b.do("start the first trace", chromedp.Click(chromedp.ID("start-trace")))
	b.waitJS("traced", `document.querySelector('#movie-status').dataset.status === 'traced' && document.querySelector('#results').dataset.count === '300'`)
	// The trace's end hands the movie back to Alice's analysis lease: the
	// settings are editable again only once the page holds it.
	b.waitJS("editable again", banner+`.dataset.mode === 'edit' && !document.querySelector('#from-frame').disabled`)

	// A partial retrace from frame 150: Retrace asks first; the earlier
	// results are shown as being replaced while it runs.
	b.typeInto("from-frame", "150")
	b.do("retrace", chromedp.Click(chromedp.ID("start-trace")))
	b.waitJS("Retrace asks before replacing", `!document.querySelector('#retrace-ask').hidden && document.activeElement.id === 'retrace-yes'`)
	if got := getMovie(t, st, truthMovie); got.Status != domain.StatusTraced {
		t.Fatalf("the retrace started before the answer: status %s", got.Status)
	}
	if txt := b.str(`document.querySelector('#retrace-ask-text').textContent`); !strings.Contains(txt, "300 traced frames are stored") {
		t.Errorf("the retrace question says %q; want it to name the 300 stored frames", txt)
	}
	b.do("replace them", chromedp.Click(chromedp.ID("retrace-yes")))
	b.waitJS("the earlier results are being replaced", `document.querySelector('#results').dataset.state === 'replacing' && document.querySelector('#results').textContent.startsWith('Being replaced')`)
	b.waitJS("retraced", `document.querySelector('#movie-status').dataset.status === 'traced' && document.querySelector('#results').dataset.state === 'current'`)
	b.waitJS("Last trace says the retrace's part and the movie's count", `document.querySelector('#last-job').textContent.startsWith('Complete: 150 frames (frames 150 to 299) traced by you') && document.querySelector('#last-job').dataset.frames === '300'`)
	b.waitJS("History states the retrace's planned frames", `[...document.querySelectorAll('[data-testid="history-item"][data-type="started"]')].some(e => e.textContent.startsWith('You started a trace of frames 150 to 299 at '))`)
	// Leaving gives the lease back; the release is held up 4 s on its way,
	// and the movie is opened again meanwhile: the page must wait for it
	// rather than be refused its own movie as held "in another tab".
	holdLeaseReleases(b, 4*time.Second)
	b.do("back to the list", chromedp.Click(chromedp.ID("back")))
	progress := `document.querySelector('[data-testid="progress-` + truthMovie + `"]')`
	// Before: "Done: 150 traced frames over the 300 frames" (the last job's).
	b.waitJS("the list states the movie's 300", progress+`.textContent === 'Done: 300 traced frames over the 300 frames of the movie'`)
	b.shot("truth-1-list-after-partial-retrace")

	// A retrace from 100, cancelled while it runs.
	openFromList(b, truthMovie)
	// The Analyze view keeps the last movie's banner until the new one
	// renders: wait for this visit's frames and lease.
	b.waitJS("editing it again", `document.querySelector('#results').dataset.count === '300' && `+banner+`.dataset.mode === 'edit' && !document.querySelector('#from-frame').disabled`)
	b.typeInto("from-frame", "100")
	b.do("retrace", chromedp.Click(chromedp.ID("start-trace")))
	b.waitJS("Retrace asks", `!document.querySelector('#retrace-ask').hidden`)
	b.do("replace them", chromedp.Click(chromedp.ID("retrace-yes")))
	b.waitJS("it traces", `!document.querySelector('#progress-panel').hidden && +document.querySelector('#progress-text').dataset.written > 0`)
	b.do("cancel", chromedp.Click(chromedp.ID("cancel-trace")))
	b.waitJS("cancelled", `document.querySelector('#movie-status').dataset.status === 'tracing_cancelled' && !document.querySelector('#job-panel').hidden`)
	srv := getMovie(t, st, truthMovie)
	n := srv.TracedFrames
	if srv.LastJob == nil || n != 100+srv.LastJob.Frames || srv.LastJob.Frames == 0 {
		t.Fatalf("the server after the cancel: %d traced frames, last job %+v; want the 100 kept + the job's", n, srv.LastJob)
	}
	t.Logf("cancelled: the job wrote %d frames (progress as published before the cancel is not known here); %d stored", srv.LastJob.Frames, n)
	want := fmt.Sprint(n)
	b.waitJS("Results loads them", `document.querySelector('#results').dataset.count === '`+want+`'`)
	b.waitJS("History shows the cancel live, with the count", `[...document.querySelectorAll('[data-testid="history-item"][data-type="cancelled"]')].some(e => e.dataset.frames === '`+want+`')`)
	counts := map[string]string{
		"Results":        b.str(`document.querySelector('#results').dataset.count`),
		"Last trace":     b.str(`document.querySelector('#last-job').dataset.frames`),
		"History":        b.str(`document.querySelector('[data-testid="history-item"][data-type="cancelled"]').dataset.frames`),
		"download state": b.str(`document.querySelector('#downloads-note').dataset.frames`),
	}
	texts := map[string]string{
		"Results":        b.str(`document.querySelector('#results').textContent`),
		"Last trace":     b.str(`document.querySelector('#last-job').textContent`),
		"History":        b.str(`document.querySelector('[data-testid="history-item"][data-type="cancelled"]').textContent`),
		"download state": b.str(`document.querySelector('#downloads-note').textContent`),
	}
	for where, got := range counts {
		if got != want {
			t.Errorf("%s states %s frames, the server stores %s", where, got, want)
		}
		if !strings.Contains(texts[where], want+" traced frame") {
			t.Errorf("%s says %q; want it to say %s traced frames", where, texts[where], want)
		}
	}
	b.shot("truth-2-after-cancel")
	b.do("download JSON", chromedp.Click(chromedp.ID("download-json")))
	var file struct {
		TracedFrames int               `json:"tracedFrames"`
		Frames       []json.RawMessage `json:"frames"`
	}
	if err := json.Unmarshal(b.waitFile(truthMovie+"-frames-cancelled.json"), &file); err != nil {
		t.Fatal(err)
	}
	if file.TracedFrames != n || len(file.Frames) != n {
		t.Errorf("the download holds %d frames (says %d), the server stores %d", len(file.Frames), file.TracedFrames, n)
	}
	b.do("back to the list", chromedp.Click(chromedp.ID("back")))
	b.waitJS("the list states the same count", progress+`.dataset.frames === '`+want+`' && `+progress+`.textContent.startsWith('Cancelled: `+want+` of 300 frames')`)
	b.shot("truth-3-list-after-cancel")
}

// Issue 25, "lock etiquette": a viewer asks the editor to release the movie
// and asks to be told when it is free; the editor sees the request; an
// editor who stops editing is asked "Still editing?" after the configured
// idle time, and the lock is released when nobody answers; "last active" is
// the last edit, not the heartbeat.
func TestLockEtiquette(t *testing.T) {
	out := outputDir(t)
	const id = "t-etiquette"
	m, err := domain.NewMovie(id, "Defect movie "+id, 100, 30, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "m1", Label: "Target", X: 0.3, Y: 0.6}}
	// Long enough for both pages to open and talk under load, short enough
	// for a test: asked 20 s after the last edit, released 10 s later.
	const idle = 20 * time.Second
	st := startStackWith(t, out, func(o *stack.Options) {
		o.Movies = []domain.Movie{m}
		o.EditIdle = idle
	})
	tabs := newTabs(t, out, "alice", "bob")
	alice, bob := tabs[0], tabs[1]
	signIn(alice, st.URL, "Alice")
	signIn(bob, st.URL, "Bob")
	openFromList(alice, id)
	waitEditing(alice)
	// Last active is the last edit: the lock's start until Alice edits.
	before := getMovie(t, st, id).Lock
	if before == nil || before.LastActiveAt != before.StartedAt {
		t.Fatalf("before any edit the lock says %+v; want last active = its start", before)
	}
	openFromList(bob, id)
	bob.waitJS("Bob is view-only", banner+`.dataset.mode === 'view'`)
	alice.typeInto("capture-interval", "2")
	alice.do("save", chromedp.Click(chromedp.ID("save-settings")))
	waitFor(t, "the edit is Alice's last activity", func() bool {
		l := getMovie(t, st, id).Lock
		return l != nil && l.LastActiveAt > before.StartedAt
	})

	bob.waitJS("Bob can ask Alice", `!document.querySelector('#ask-release').hidden && document.querySelector('#ask-release').textContent.includes('Alice')`)
	bob.do("ask Alice to release", chromedp.Click(chromedp.ID("ask-release")))
	bob.waitJS("Bob sees his request", `!document.querySelector('#ask-sent').hidden`)
	alice.waitJS("Alice sees Bob's request", `!document.querySelector('#release-asked').hidden && document.querySelector('#release-asked-text').textContent.startsWith('Bob asked you at ')`)
	alice.shot("etiquette-1-alice-sees-the-request")
	bob.do("ask to be told when it is free", chromedp.Click(chromedp.ID("notify-free")))
	bob.waitJS("Bob waits for it", `document.querySelector('#notify-free').getAttribute('aria-pressed') === 'true'`)

	// Idle: asked after the configured time; an answer keeps the lock.
	alice.waitJS("Still editing? is asked", `!document.querySelector('#idle-ask').hidden && document.activeElement.id === 'still-editing'`)
	// Answer at once (a screenshot here can take longer than the answer
	// window on a loaded machine): the focus is on the answer.
	alice.do("answer yes", chromedp.Evaluate[chromedp.Void](`document.activeElement.click()`))
	alice.waitJS("the question goes, the lock stays", `document.querySelector('#idle-ask').hidden && `+banner+`.dataset.mode === 'edit'`)
	if l := getMovie(t, st, id).Lock; l == nil || l.UserName == "" {
		t.Fatal("the answered question released the lock")
	}
	// Unanswered, the lock is released.
	alice.waitJS("asked again", `!document.querySelector('#idle-ask').hidden`)
	asked := time.Now()
	alice.shot("etiquette-2-still-editing")
	alice.waitJS("released", banner+`.dataset.mode !== 'edit' && document.querySelector('#message').textContent.includes('Still editing?')`)
	if waited := time.Since(asked); waited < 5*time.Second {
		t.Errorf("released %v after asking; want the answer window (10 s, less a poll)", waited)
	}
	waitFor(t, "the lock is free on the server", func() bool { return getMovie(t, st, id).Lock == nil })
	bob.waitJS("Bob is told", `document.querySelector('#message').textContent.startsWith('The movie is free now') && !document.querySelector('#acquire').hidden`)
	bob.shot("etiquette-3-bob-told-free")
}

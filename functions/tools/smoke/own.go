package smoke

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// The walk's own movie goes through the page as a person adds one: the
// file chosen in the Add a movie panel's picker, uploaded straight to the
// bucket (one PUT, or in parts when larger than the API's part size), the
// progress bar watched, the ingest awaited; at the end it is renamed and
// deleted from the list, through their dialogs.

// uploadSpy records in the page every fraction the upload bar shows and
// every sentence the upload row says.
const uploadSpy = `(() => {
  window.__bars = []; window.__says = [];
  const rows = document.querySelector('#upload-rows');
  new MutationObserver(() => {
    for (const p of rows.querySelectorAll('[data-testid=upload-progress]')) {
      const f = Math.round(1000 * p.value / p.max) / 1000;
      if (window.__bars[window.__bars.length - 1] !== f) window.__bars.push(f);
    }
    for (const s of rows.querySelectorAll('[data-testid=upload-state]')) {
      if (window.__says[window.__says.length - 1] !== s.textContent) window.__says.push(s.textContent);
    }
  }).observe(rows, { childList: true, subtree: true, attributes: true, characterData: true });
  return true; })()`

// addOwnMovie chooses the clip in the page's file picker and waits until
// the movie is ready; it returns the new movie's ID.
func (w *walker) addOwnMovie(ctx context.Context) (string, error) {
	dir, err := os.MkdirTemp("", "smoke-upload-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "smoke walk.mp4")
	if err := os.WriteFile(path, w.o.Clip, 0o644); err != nil {
		return "", err
	}
	if err := until(ctx, `!document.querySelector('#list-view').hidden && !!document.querySelector('#add-file')`); err != nil {
		return "", err
	}
	if _, err := eval[bool](ctx, uploadSpy); err != nil {
		return "", err
	}
	began := time.Now()
	if _, err := chromedp.Run(ctx, chromedp.SetUploadFiles(chromedp.CSS(`#add-file`), []string{path}, chromedp.NodeReady)); err != nil {
		return "", err
	}
	phase := `document.querySelector('[data-testid=upload]')?.dataset.phase`
	if err := until(ctx, `['sent', 'failed', 'interrupted'].includes(`+phase+`)`); err != nil {
		return "", err
	}
	says, _ := eval[[]string](ctx, `window.__says`)
	if p, _ := eval[string](ctx, phase); p != "sent" {
		return "", fmt.Errorf("the upload stopped: %q", says)
	}
	sent := time.Since(began)
	bars, _ := eval[[]float64](ctx, `window.__bars`)
	between := 0
	for _, f := range bars {
		if f > 0 && f < 1 {
			between++
		}
	}
	inParts := false
	for _, s := range says {
		inParts = inParts || strings.Contains(s, " parts)")
	}
	w.o.Log("smoke:    uploaded %d bytes in %s (in parts: %v); the bar showed %d fractions between 0 and 1", len(w.o.Clip), sent.Round(time.Millisecond), inParts, between)
	if inParts && between < 2 {
		return "", fmt.Errorf("an upload in parts whose bar did not move: %v", bars)
	}
	id, err := eval[string](ctx, `document.querySelector('[data-testid=upload]').dataset.movieId`)
	if err != nil || id == "" {
		return "", fmt.Errorf("no movie for the upload: %v", err)
	}
	status := `document.querySelector('[data-testid="status-` + id + `"]')?.textContent`
	if err := until(ctx, `['Ready', 'Video unreadable'].includes(`+status+`)`); err != nil {
		return "", err
	}
	if s, _ := eval[string](ctx, status); s != "Ready" {
		return "", fmt.Errorf("the movie's video could not be read: %s", mustText(ctx))
	}
	says, _ = eval[[]string](ctx, `window.__says`)
	w.o.Log("smoke:    ready %s after choosing the file; the upload said %q", time.Since(began).Round(time.Millisecond), says)
	return id, nil
}

// renameOwnMovie renames the movie from the list's Rename dialog.
func (w *walker) renameOwnMovie(ctx context.Context, id string) error {
	title := "smoke walk " + time.Now().UTC().Format("2006-01-02 15:04:05")
	if err := until(ctx, `!!document.querySelector('[data-testid="rename-`+id+`"]')`); err != nil {
		return err
	}
	if _, err := chromedp.Run(ctx, chromedp.Click(chromedp.CSS(`[data-testid="rename-`+id+`"]`))); err != nil {
		return err
	}
	if err := until(ctx, `document.querySelector('#manage-dialog').open && document.activeElement.id === 'manage-title'`); err != nil {
		return err
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("manage-title"), title), chromedp.Click(chromedp.CSS(`[data-testid=manage-ok]`))); err != nil {
		return err
	}
	return until(ctx, `!document.querySelector('#manage-dialog').open && document.querySelector('tr[data-movie-id="`+id+`"] th')?.textContent.startsWith('`+title+`')`)
}

// deleteOwnMovie deletes the movie from the list's Delete dialog, which
// must name what is lost.
func (w *walker) deleteOwnMovie(ctx context.Context, id string) error {
	if _, err := chromedp.Run(ctx, chromedp.Click(chromedp.CSS(`[data-testid="delete-`+id+`"]`))); err != nil {
		return err
	}
	if err := until(ctx, `document.querySelector('#manage-dialog').open`); err != nil {
		return err
	}
	loss, err := eval[string](ctx, `document.querySelector('[data-testid=manage-loss]').textContent`)
	if err != nil {
		return err
	}
	if !strings.Contains(loss, "its video (") || !strings.Contains(loss, "traced frame") || !strings.Contains(loss, "cannot be undone") {
		return errors.New("the confirmation does not name what is lost: " + loss)
	}
	w.o.Log("smoke:    %s", loss)
	if _, err := chromedp.Run(ctx, chromedp.Click(chromedp.CSS(`[data-testid=manage-ok]`))); err != nil {
		return err
	}
	if err := until(ctx, `!document.querySelector('tr[data-movie-id="`+id+`"]')`); err != nil {
		return err
	}
	code, err := eval[int](ctx, `tracingAuth.fetch('/movies/`+id+`').then(r => r.status)`)
	if err != nil {
		return err
	}
	if code != 404 {
		return fmt.Errorf("GET /movies/%s answers %d after the delete, want 404", id, code)
	}
	return nil
}

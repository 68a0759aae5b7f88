package e2e

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/local/stack"
)

// TestMovieWithoutVideo: a movie whose file has not arrived says so in the
// list (not "Unknown"); opening it shows, in place of the editor, why it
// cannot be analysed yet, naming no status value; when the file arrives and
// is ingested, the page opens the editor by itself.
func TestMovieWithoutVideo(t *testing.T) {
	out := outputDir(t)
	st := startStackWith(t, out, func(o *stack.Options) { o.Movies = nil; o.FailAt = map[string]int{} })
	_, data := writeClip(t)
	var created httpapi.MovieCreated
	if status := apiCall(t, st, http.MethodPost, "movies", map[string]any{
		"title": "Not uploaded yet", "fileName": "square.mp4", "contentType": "video/mp4", "sizeBytes": len(data)}, &created); status != http.StatusCreated {
		t.Fatalf("POST /movies: %d", status)
	}
	id := created.Movie.ID
	b := newTabs(t, out, "dana")[0]
	signIn(b, st.URL, "Dana")
	b.waitJS("the movie's status in the list", `document.querySelector('[data-testid="status-`+id+`"]')?.textContent === 'Waiting for its video'`)
	b.do("open it", chromedp.Click(chromedp.CSS(`[data-testid="analyze-`+id+`"]`)))
	b.waitJS("the reason it cannot be analysed, in place of the editor", `!document.querySelector('#not-ready').hidden &&
		document.querySelector('#analyze-view').hidden && document.activeElement.id === 'not-ready-title'`)
	reason := eval[string](b, `document.querySelector('#not-ready-reason').textContent`)
	if !strings.HasPrefix(reason, "This movie's video has not been uploaded yet.") {
		t.Errorf("reason %q", reason)
	}
	for _, internal := range []string{"awaiting_upload", "movie_not_ready", "status"} {
		if strings.Contains(reason+eval[string](b, `document.querySelector('#message').textContent`), internal) {
			t.Errorf("the page names %q: %q", internal, reason)
		}
	}
	b.shot("01-not-ready")
	b.checkAxe("01-not-ready")

	// The file arrives: the page opens the editor on the real frames.
	req, _ := http.NewRequestWithContext(t.Context(), created.Upload.Method, created.Upload.URL, bytes.NewReader(data))
	for k, v := range created.Upload.Headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("PUT to the presigned URL: %s", res.Status)
	}
	b.waitJS("the editor once the video is ingested", `document.querySelector('#not-ready').hidden && !document.querySelector('#analyze-view').hidden &&
		document.querySelector('#player').dataset.source === 'image'`)
	b.shot("02-ready")
}

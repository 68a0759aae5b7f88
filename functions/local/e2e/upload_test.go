package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/local/stack"
)

// bigClip writes a 100 MB MP4 that is cheap to make and to ingest: 400
// frames of 160x120 at a constant 50 Mbit/s (x264 pads with filler data),
// so the file is large while its frames are few and small.
func bigClip(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "arena trial 7.mp4")
	out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-t", "16",
		"-c:v", "libx264", "-preset", "ultrafast", "-b:v", "50M", "-minrate", "50M", "-maxrate", "50M", "-bufsize", "1M",
		"-x264-params", "nal-hrd=cbr:filler=1", "-pix_fmt", "yuv420p", "-threads", "1", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() < 100_000_000 {
		t.Fatalf("the clip: %v, %v bytes", err, fi)
	}
	return path
}

// progressSpy records, in the page, every fraction the upload bars show and
// every sentence the upload rows say, as they change.
const progressSpy = `(() => {
  window.__bars = []; window.__says = new Set();
  const rows = document.querySelector('#upload-rows');
  new MutationObserver(() => {
    for (const p of rows.querySelectorAll('[data-testid=upload-progress]')) {
      const f = Math.round(1000 * p.value / p.max) / 1000;
      if (window.__bars[window.__bars.length - 1] !== f) window.__bars.push(f);
    }
    for (const s of rows.querySelectorAll('[data-testid=upload-state]')) window.__says.add(s.textContent);
  }).observe(rows, { childList: true, subtree: true, attributes: true, characterData: true });
  return true; })()`

// The done-when test of issue 25's "movies in the page": Alice adds a 100
// MB movie from the page's file picker; it goes straight to S3 in parts
// (16 MiB, the default part size: 6 parts) with a progress bar that moves;
// the list shows it being prepared and then ready, with its thumbnail,
// duration, resolution and who added it; she renames it and deletes it
// after a confirmation that names what is lost.
func TestAddRenameAndDeleteAMovieInThePage(t *testing.T) {
	out := outputDir(t)
	st := startStackWith(t, out, func(o *stack.Options) {
		o.Movies, o.FailAt = o.Movies[:1], map[string]int{}
	})
	path := bigClip(t)
	fi, _ := os.Stat(path)
	alice := newTabs(t, out, "alice")[0]
	signIn(alice, st.URL, "Alice")
	alice.waitJS("the list with its Add a movie panel", `!document.querySelector('#list-view').hidden && !!document.querySelector('#add-choose')`)
	if !eval[bool](alice, progressSpy) {
		t.Fatal("spy")
	}
	began := time.Now()
	alice.do("choose the 100 MB file", chromedp.SetUploadFiles(chromedp.CSS(`#add-file`), []string{path}, chromedp.NodeReady))
	alice.waitJS("the upload runs in parts", `[...window.__says].some(s => / of 6 parts/.test(s))`)
	alice.shot("upload-01-uploading")
	for time.Since(began) < 10*time.Minute && !alice.becomes(`document.querySelector('[data-testid=upload]')?.dataset.phase === 'sent'`) {
		if p := alice.str(`document.querySelector('[data-testid=upload]')?.dataset.phase || ''`); p == "failed" || p == "interrupted" {
			t.Fatalf("the upload stopped: %s", alice.str(`document.querySelector('[data-testid=upload-state]').textContent`))
		}
	}
	sent := time.Since(began)
	bars := eval[[]float64](alice, `window.__bars`)
	var between int
	for _, f := range bars {
		if f > 0 && f < 1 {
			between++
		}
	}
	t.Logf("uploaded %d bytes in %s; the bar showed %d fractions between 0 and 1: %v", fi.Size(), sent.Round(time.Millisecond), between, bars)
	if between < 3 || bars[len(bars)-1] != 1 {
		t.Fatalf("the progress bar did not move visibly: %v", bars)
	}
	id := alice.str(`document.querySelector('[data-testid=upload]').dataset.movieId`)
	if m := getMovie(t, st, id); m.Upload == nil || m.Upload.SizeBytes != fi.Size() || m.Upload.FileName != "arena trial 7.mp4" || m.Title != "arena trial 7" {
		t.Fatalf("the movie: %+v upload %+v", m, m.Upload)
	}

	// Its ingest, then ready, as the upload row and the list say.
	for time.Since(began) < 10*time.Minute && !alice.becomes(`document.querySelector('[data-testid="status-`+id+`"]')?.textContent === 'Ready'`) {
	}
	says := eval[[]string](alice, `[...window.__says]`)
	t.Logf("ready %s after choosing the file; the upload row said: %q", time.Since(began).Round(time.Millisecond), says)
	m := getMovie(t, st, id)
	if m.Status != domain.StatusReady || m.FrameCount != 400 || m.Video == nil || m.Video.Width != 160 || m.Video.Height != 120 {
		t.Fatalf("after the ingest: %s, %d frames, %+v (%s)", m.Status, m.FrameCount, m.Video, m.IngestFailure)
	}
	alice.waitJS("the list's thumbnail is frame 0", `document.querySelector('[data-testid="thumb-`+id+`"]')?.naturalWidth === 160`)
	if d := alice.str(`document.querySelector('[data-testid="details-` + id + `"]').textContent`); d != "0:16 · 160 × 120 · added by you" {
		t.Errorf("the list's details: %q", d)
	}
	alice.waitJS("the upload row says it is ready", `/^Uploaded\. Ready\.$/.test(document.querySelector('[data-testid=upload-state]').textContent)`)
	alice.shot("upload-02-ready")
	alice.checkAxe("list-with-upload")

	// Rename.
	alice.activate("Rename", `[data-testid="rename-`+id+`"]`)
	alice.waitJS("the rename dialog", `document.querySelector('#manage-dialog').open && document.activeElement.id === 'manage-title'`)
	alice.do("type the new title", chromedp.SetValue(chromedp.ID("manage-title"), "Arena trial 7, left camera"))
	alice.activate("Save", `[data-testid=manage-ok]`)
	alice.waitJS("the list shows the new title", `!document.querySelector('#manage-dialog').open &&
		document.querySelector('tr[data-movie-id="`+id+`"] th').textContent.startsWith('Arena trial 7, left camera')`)
	if m := getMovie(t, st, id); m.Title != "Arena trial 7, left camera" {
		t.Fatalf("renamed: %q", m.Title)
	}

	// Delete, after a confirmation that names what is lost.
	alice.activate("Delete", `[data-testid="delete-`+id+`"]`)
	alice.waitJS("the delete dialog", `document.querySelector('#manage-dialog').open`)
	loss := alice.str(`document.querySelector('[data-testid=manage-loss]').textContent`)
	heading := alice.str(`document.querySelector('#manage-heading').textContent`)
	if heading != "Delete “Arena trial 7, left camera”?" || !strings.Contains(loss, "its video (0:16, 160 × 120)") ||
		!strings.Contains(loss, "its history") || !strings.Contains(loss, "cannot be undone") {
		t.Errorf("the confirmation: %q / %q", heading, loss)
	}
	alice.checkAxe("delete-dialog")
	alice.activate("Delete for everyone", `[data-testid=manage-ok]`)
	alice.waitJS("the movie leaves the list", `!document.querySelector('tr[data-movie-id="`+id+`"]')`)
	var p httpapi.Problem
	if code := apiCall(t, st, http.MethodGet, "movies/"+id, nil, &p); code != http.StatusNotFound {
		t.Fatalf("after delete: GET answered %d", code)
	}
	t.Logf("the whole walk: %s", time.Since(began).Round(time.Millisecond))
}

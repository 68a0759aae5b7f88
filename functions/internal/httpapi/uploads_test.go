package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image/jpeg"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/purge"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/token"
)

// testMaxUpload is the size limit of the API under test.
const testMaxUpload = 10 << 20

func createBody(title, fileName, contentType string, size int64) map[string]any {
	return map[string]any{"title": title, "fileName": fileName, "contentType": contentType, "sizeBytes": size}
}

// The movie lifecycle through the API, both transports: create (201 with a
// presigned PUT), upload through it, not analysable before the ingest, the
// ingest's conditional write (played here with the domain command), the
// frame image redirect, delete refused under a live lease, then delete.
func TestCreateUploadViewDelete(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			a := newAPI(t, tr)
			alice := a.alice()
			file := bytes.Repeat([]byte("movie"), 1000)
			r := alice.do("POST", "/movies", createBody("Zebrafish 🐟 — Larve", "larva 1.mp4", "video/mp4", int64(len(file)))).want(http.StatusCreated)
			var created httpapi.MovieCreated
			r.decode(&created)
			id := created.Movie.ID
			if !domain.ValidMovieID(id) || r.header.Get("Location") != "/movies/"+id {
				t.Fatalf("id %q location %q", id, r.header.Get("Location"))
			}
			m := created.Movie
			if m.Status != domain.StatusAwaitingUpload || m.Video != nil || m.Title != "Zebrafish 🐟 — Larve" || m.Upload == nil ||
				m.Upload.FileName != "larva 1.mp4" || m.Upload.SizeBytes != int64(len(file)) || m.Lock != nil {
				t.Fatalf("created: %+v", m)
			}
			up := created.Upload
			if up.Method != "PUT" || !strings.Contains(up.URL, "X-Amz-Signature=") || up.Headers["Content-Type"] != "video/mp4" ||
				up.ExpiresAt != m.Upload.ExpiresAt {
				t.Fatalf("upload: %+v", up)
			}
			// The browser's PUT, straight to S3.
			req, _ := http.NewRequest(up.Method, up.URL, bytes.NewReader(file))
			for k, v := range up.Headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("PUT to S3: %d", resp.StatusCode)
			}
			if obj, err := a.fx.files.Head(context.Background(), s3store.UploadKey(id)); err != nil || obj.Size != int64(len(file)) {
				t.Fatalf("stored upload: %+v %v", obj, err)
			}

			alice.open(id).problem(http.StatusConflict, domain.CodeMovieNotReady)
			if p := alice.do("GET", "/movies/"+id+"/frames/0/image", nil).problem(http.StatusNotFound, domain.CodeNotFound); p.Detail != "This movie's video has not been uploaded yet." {
				t.Errorf("frame image before the upload: detail %q", p.Detail)
			}

			// The ingest: a chunk of the rendition (2 frames of 32x24, by
			// ffmpeg) and the conditional write.
			chunkPath := filepath.Join(t.TempDir(), "c.mp4")
			if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=32x24:rate=25",
				"-frames:v", "2", "-c:v", "libx264", "-pix_fmt", "yuv420p", chunkPath).CombinedOutput(); err != nil {
				t.Fatalf("ffmpeg: %v %s", err, out)
			}
			chunk, err := os.ReadFile(chunkPath)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.fx.files.Put(context.Background(), media.ChunkKey(id, 0), media.ChunkType, chunk); err != nil {
				t.Fatal(err)
			}
			if _, err := a.fx.movies.Commit(context.Background(), id, domain.CompleteIngest{FrameCount: 2, FrameRate: 25, Now: t0,
				Video: domain.Video{Width: 32, Height: 24, Codec: "h264", DurationSeconds: 0.08, ChunkFrames: 60}}); err != nil {
				t.Fatal(err)
			}
			d := alice.get(id).want(http.StatusOK).detail()
			if d.Status != domain.StatusReady || d.Video == nil || *d.Video != (httpapi.VideoView{Width: 32, Height: 24, FrameCount: 2,
				FrameRate: 25, Codec: "h264", DurationSeconds: 0.08, ChunkFrames: 60}) || d.Trim != (httpapi.TrimView{Start: 0, End: 2}) {
				t.Fatalf("ready: %+v video %+v", d, d.Video)
			}

			// Frame 1's image, decoded from the chunk: a colour JPEG of the
			// rendition's size, kept by the browser.
			r = alice.do("GET", "/movies/"+id+"/frames/1/image", nil).want(http.StatusOK)
			if r.header.Get("Content-Type") != "image/jpeg" || r.header.Get("Cache-Control") != httpapi.FrameImageCacheControl {
				t.Fatalf("frame image: %v", r.header)
			}
			img, err := jpeg.Decode(bytes.NewReader(r.body))
			if err != nil || img.Bounds().Dx() != 32 || img.Bounds().Dy() != 24 {
				t.Fatalf("frame image: %v %v", img, err)
			}
			// The chunk, for a page that steps through whole chunks.
			loc := alice.do("GET", "/movies/"+id+"/chunks/0", nil).want(http.StatusFound).header.Get("Location")
			got, err := http.Get(loc)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(got.Body)
			got.Body.Close()
			if got.StatusCode != http.StatusOK || !bytes.Equal(body, chunk) {
				t.Fatalf("chunk: %d, %d bytes", got.StatusCode, len(body))
			}
			// The page asks for the URL as JSON (its fetch would carry the
			// identity headers across the redirect).
			var cv httpapi.ChunkView
			r = alice.do("GET", "/movies/"+id+"/chunks/0", nil, header("Accept", "application/json")).want(http.StatusOK)
			if err := json.Unmarshal(r.body, &cv); err != nil || cv.Chunk != 0 || cv.FirstFrame != 0 || cv.FrameCount != 2 ||
				cv.ExpiresAt == "" || !strings.Contains(r.header.Get("Vary"), "Accept") {
				t.Fatalf("chunk as JSON: %s %v %v", r.body, r.header, err)
			}
			if got, err := http.Get(cv.URL); err != nil || got.StatusCode != http.StatusOK {
				t.Fatalf("chunk URL from JSON: %v %v", got, err)
			} else {
				got.Body.Close()
			}
			for _, k := range []string{"1", "-1", "01", "x"} {
				alice.do("GET", "/movies/"+id+"/chunks/"+k, nil).problem(http.StatusNotFound, domain.CodeNotFound)
				alice.do("GET", "/movies/"+id+"/chunks/"+k, nil, header("Accept", "application/json")).problem(http.StatusNotFound, domain.CodeNotFound)
			}
			for _, n := range []string{"2", "-1", "01", "x", "99999999"} {
				alice.do("GET", "/movies/"+id+"/frames/"+n+"/image", nil).problem(http.StatusNotFound, domain.CodeNotFound)
			}
			a.anonymous().do("GET", "/movies/"+id+"/frames/1/image", nil).problem(http.StatusUnauthorized, httpapi.CodeUnauthenticated)

			// Delete: refused while Alice edits, then done.
			alice.open(id).want(http.StatusCreated)
			bob := a.bob()
			p := bob.do("DELETE", "/movies/"+id, nil).problem(http.StatusConflict, domain.CodeLeaseHeld)
			if p.Holder == nil || !strings.HasPrefix(p.Holder.UserName, "Alice") {
				t.Fatalf("holder: %+v", p.Holder)
			}
			alice.release(id)
			bob.do("DELETE", "/movies/"+id, nil).want(http.StatusNoContent)
			bob.get(id).problem(http.StatusNotFound, domain.CodeNotFound)
			// Deleting is idempotent: a retry whose answer was lost is the
			// same 204 (issue 20 item 2).
			bob.do("DELETE", "/movies/"+id, nil).want(http.StatusNoContent)
			// The sweeper's clean-up (purge) removes the files, the frames
			// and then the row; DELETE then answers 404.
			stored, err := a.fx.movies.Get(context.Background(), id)
			if err != nil || stored.Status != domain.StatusDeleting {
				t.Fatalf("after DELETE: %v, %s", err, stored.Status)
			}
			fin := purge.Finisher{Files: a.fx.files, Frames: a.fx.frames, Rows: a.fx.movies, Grace: time.Nanosecond}
			if gone, err := fin.Finish(context.Background(), stored, stored.UpdatedAt.Add(time.Second)); err != nil || !gone {
				t.Fatalf("purge: %v, %v", gone, err)
			}
			bob.do("DELETE", "/movies/"+id, nil).problem(http.StatusNotFound, domain.CodeNotFound)
			for _, key := range []string{s3store.UploadKey(id), media.ChunkKey(id, 0)} {
				if _, err := a.fx.files.Head(context.Background(), key); err != s3store.ErrNotFound {
					t.Errorf("%s still there after delete: %v", key, err)
				}
			}
			a.anonymous().do("DELETE", "/movies/"+id, nil).problem(http.StatusUnauthorized, httpapi.CodeUnauthenticated)
		})
	}
}

// Garbage for POST /movies: each gets its problem naming the field, and
// creates nothing.
func TestCreateMovieGarbage(t *testing.T) {
	type bad struct {
		name   string
		body   string
		ct     string
		status int
		code   domain.Code
		field  string
	}
	ok := func(title, name, ct string, size int64) string {
		b, _ := jsonString(createBody(title, name, ct, size))
		return b
	}
	cases := []bad{
		{"not JSON", `title=x`, "", 400, httpapi.CodeMalformed, "body"},
		{"array", `[]`, "", 400, httpapi.CodeMalformed, "body"},
		{"unknown field", `{"title":"a","fileName":"a.mp4","contentType":"video/mp4","sizeBytes":1,"path":"/etc"}`, "", 400, httpapi.CodeMalformed, "path"},
		{"duplicate field", `{"title":"a","title":"b","fileName":"a.mp4","contentType":"video/mp4","sizeBytes":1}`, "", 400, httpapi.CodeMalformed, "title"},
		{"size a string", `{"title":"a","fileName":"a.mp4","contentType":"video/mp4","sizeBytes":"1"}`, "", 400, httpapi.CodeMalformed, "sizeBytes"},
		{"size a fraction", `{"title":"a","fileName":"a.mp4","contentType":"video/mp4","sizeBytes":1.5}`, "", 400, httpapi.CodeMalformed, "sizeBytes"},
		{"size overflows", `{"title":"a","fileName":"a.mp4","contentType":"video/mp4","sizeBytes":99999999999999999999}`, "", 400, httpapi.CodeMalformed, "sizeBytes"},
		{"title invalid UTF-8", "{\"title\":\"\xff\",\"fileName\":\"a.mp4\",\"contentType\":\"video/mp4\",\"sizeBytes\":1}", "", 400, httpapi.CodeMalformed, "title"},
		{"missing title", `{"fileName":"a.mp4","contentType":"video/mp4","sizeBytes":1}`, "", 422, domain.CodeInvalid, "title"},
		{"not JSON content type", ok("a", "a.mp4", "video/mp4", 1), "text/plain", 415, httpapi.CodeUnsupportedMedia, "Content-Type"},
		{"too large", ok("a", "a.mp4", "video/mp4", testMaxUpload+1), "", 413, domain.CodeFileTooLarge, "sizeBytes"},
		{"not a video type", ok("a", "a.pdf", "application/pdf", 10), "", 415, domain.CodeNotVideo, "contentType"},
		{"image type", ok("a", "a.png", "image/png", 10), "", 415, domain.CodeNotVideo, "contentType"},
		{"empty file", ok("a", "a.mp4", "video/mp4", 0), "", 422, domain.CodeInvalid, "sizeBytes"},
		{"negative size", ok("a", "a.mp4", "video/mp4", -5), "", 422, domain.CodeInvalid, "sizeBytes"},
		{"path in file name", ok("a", "../../etc/passwd", "video/mp4", 10), "", 422, domain.CodeInvalid, "fileName"},
		{"windows path", ok("a", `..\..\boot.ini`, "video/mp4", 10), "", 422, domain.CodeInvalid, "fileName"},
		{"control in title", ok("a\u0007b", "a.mp4", "video/mp4", 10), "", 422, domain.CodeInvalid, "title"},
		{"bidi override in name", ok("a", "clip\u202egpj.exe", "video/mp4", 10), "", 422, domain.CodeInvalid, "fileName"},
		{"empty title", ok("", "a.mp4", "video/mp4", 10), "", 422, domain.CodeInvalid, "title"},
		{"long title", ok(strings.Repeat("ü", 101), "a.mp4", "video/mp4", 10), "", 422, domain.CodeInvalid, "title"},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			a := newAPI(t, tr)
			b := a.browser("u-carol", "Carol")
			before := countMovies(t, a)
			for _, c := range cases {
				ct := c.ct
				if ct == "" {
					ct = "application/json"
				}
				p := b.doRaw("POST", "/movies", c.body, header("Content-Type", ct)).problem(c.status, c.code)
				if p.Field != c.field {
					t.Errorf("%s: field %q, want %q (%s)", c.name, p.Field, c.field, p.Detail)
				}
				if c.code == domain.CodeFileTooLarge && !strings.Contains(p.Detail, "10485760 bytes (10 MiB)") {
					t.Errorf("413 does not state the limit: %q", p.Detail)
				}
			}
			if after := countMovies(t, a); after != before {
				t.Fatalf("garbage created %d movies", after-before)
			}
		})
	}
}

func countMovies(t *testing.T, a *api) int {
	t.Helper()
	movies, _, err := a.fx.movies.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(movies)
}

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// TestDuplicateCreateIs409: a create whose minted movie ID is taken (two
// IDs alike, forced here) is a 409 already_exists, not a 422, and leaves
// the first movie as it was.
func TestDuplicateCreateIs409(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			id := token.New()
			a := newAPIOn(t, tr, tables(t), func(c *httpapi.Config) { c.NewID = func() string { return id } })
			alice := a.alice()
			var first httpapi.MovieCreated
			alice.do("POST", "/movies", createBody("First", "a.mp4", "video/mp4", 1000)).want(http.StatusCreated).decode(&first)
			alice.do("POST", "/movies", createBody("Second", "b.mp4", "video/mp4", 1000)).problem(http.StatusConflict, domain.CodeExists)
			if m := a.row(first.Movie.ID); m.Title != "First" {
				t.Fatalf("the first movie became %+v", m)
			}
		})
	}
}

// Issue 20 item 2: POST /movies with an Idempotency-Key is idempotent. A
// retry with the same key (its first answer lost) is answered 201 with the
// same movie, as first stored, and a fresh upload URL; the same key for
// another file is a 409 naming the header; another user's same key is her
// own movie; a malformed key is refused.
func TestCreateMovieWithAnIdempotencyKey(t *testing.T) {
	a := newAPI(t, transports[0])
	carol, dave := a.browser("u-carol", "Carol"), a.browser("u-dave", "Dave")
	body := createBody("Keyed", "k.mp4", "video/mp4", 1000)
	key, ct := header(httpapi.HeaderIdempotencyKey, "create-0123456789"), header("Content-Type", "application/json")
	before := countMovies(t, a)
	var first httpapi.MovieCreated
	carol.doRaw("POST", "/movies", body, key, ct).want(http.StatusCreated).decode(&first)
	a.clock.Advance(time.Second)
	var again httpapi.MovieCreated
	carol.doRaw("POST", "/movies", body, key, ct).want(http.StatusCreated).decode(&again)
	if again.Movie.ID != first.Movie.ID || again.Upload.ExpiresAt != first.Upload.ExpiresAt || again.Upload.URL == "" {
		t.Fatalf("retry: %+v\nfirst: %+v", again, first)
	}
	if n := countMovies(t, a); n != before+1 {
		t.Fatalf("%d movies created by one key, want 1", n-before)
	}
	p := carol.doRaw("POST", "/movies", createBody("Keyed", "other.mp4", "video/mp4", 1000), key, ct).problem(http.StatusConflict, domain.CodeExists)
	if p.Field != httpapi.HeaderIdempotencyKey {
		t.Fatalf("reused key: field %q", p.Field)
	}
	var theirs httpapi.MovieCreated
	dave.doRaw("POST", "/movies", body, key, ct).want(http.StatusCreated).decode(&theirs)
	if theirs.Movie.ID == first.Movie.ID {
		t.Fatal("two users' keys named the same movie")
	}
	for _, bad := range []string{"short", "has space in it", strings.Repeat("k", 129), "ümlaut-key-1234"} {
		carol.doRaw("POST", "/movies", body, header(httpapi.HeaderIdempotencyKey, bad), ct).problem(http.StatusUnprocessableEntity, domain.CodeInvalid)
	}
	carol.doRaw("POST", "/movies", body, key, header(httpapi.HeaderIdempotencyKey, "another-key-123"), ct).problem(http.StatusBadRequest, httpapi.CodeMalformed)
}

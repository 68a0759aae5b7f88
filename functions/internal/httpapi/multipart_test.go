package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
)

// partsAPI is an API whose uploads in parts use the smallest part S3
// allows, and a limit large enough for three of them.
func partsAPI(t *testing.T, tr transport) *api {
	t.Helper()
	return newAPIOn(t, tr, tables(t), func(c *httpapi.Config) {
		c.Multipart, c.PartBytes, c.MaxUploadBytes = c.Files.(*s3store.Store), domain.MinPartBytes, 4*domain.MinPartBytes
	})
}

func partsBody(title string, size int64) map[string]any {
	b := createBody(title, "big.mp4", "video/mp4", size)
	b["parts"] = true
	return b
}

// putPart sends one part as the page does (straight to S3) and returns the
// ETag S3 answered.
func putPart(t *testing.T, url string, body []byte) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == "" {
		t.Fatalf("part PUT: %d, ETag %q", resp.StatusCode, resp.Header.Get("ETag"))
	}
	return resp.Header.Get("ETag")
}

func fileOf(size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i*7 + i/4099)
	}
	return b
}

// An upload in parts through the API and the S3 emulator: POST /movies
// {parts: true} answers every part's URL; a part whose URL is presigned
// again (a resumed upload) is sent to the new URL; complete assembles the
// file byte for byte; a retried complete (its answer lost) is the same
// 200, also once the movie is ingested; a cancel after that is a no-op.
func TestUploadInParts(t *testing.T) {
	a := partsAPI(t, transports[0])
	alice := a.alice()
	size := 2*domain.MinPartBytes + 12345
	file := fileOf(size)
	var created httpapi.MovieCreated
	alice.do("POST", "/movies", partsBody("In parts", int64(size))).want(http.StatusCreated).decode(&created)
	up, id := created.Upload, created.Movie.ID
	if up.Method != httpapi.MethodMultipart || up.UploadID == "" || up.PartBytes != domain.MinPartBytes || len(up.Parts) != 3 || up.URL != "" {
		t.Fatalf("upload: %+v", up)
	}
	for i, p := range up.Parts {
		if p.Number != i+1 || !strings.Contains(p.URL, "X-Amz-Signature=") || !strings.Contains(p.URL, "partNumber="+fmt.Sprint(i+1)) {
			t.Fatalf("part %d: %+v", i, p)
		}
	}
	part := func(n int) []byte { return file[(n-1)*domain.MinPartBytes : min(n*domain.MinPartBytes, size)] }
	etags := []string{putPart(t, up.Parts[0].URL, part(1))}
	// The page was closed here; on its return it asks for the rest again.
	var again httpapi.PartURLs
	alice.do("POST", "/movies/"+id+"/upload/parts", map[string]any{"uploadId": up.UploadID, "partNumbers": []int{2, 3}}).
		want(http.StatusOK).decode(&again)
	if len(again.Parts) != 2 || again.Parts[0].Number != 2 || again.Parts[1].Number != 3 {
		t.Fatalf("parts again: %+v", again)
	}
	etags = append(etags, putPart(t, again.Parts[0].URL, part(2)), putPart(t, again.Parts[1].URL, part(3)))
	parts := make([]map[string]any, len(etags))
	for i, e := range etags {
		parts[i] = map[string]any{"partNumber": i + 1, "etag": e}
	}
	// Fewer parts than the file has: refused, nothing assembled.
	p := alice.do("POST", "/movies/"+id+"/upload/complete", map[string]any{"uploadId": up.UploadID, "parts": parts[:2]}).
		problem(http.StatusUnprocessableEntity, domain.CodeInvalid)
	if p.Field != "parts" || !strings.Contains(p.Detail, "3 parts") {
		t.Errorf("short list: %+v", p)
	}
	complete := map[string]any{"uploadId": up.UploadID, "parts": parts}
	d := alice.do("POST", "/movies/"+id+"/upload/complete", complete).want(http.StatusOK).detail()
	if d.ID != id || d.Status != domain.StatusAwaitingUpload {
		t.Fatalf("completed: %+v", d)
	}
	got, err := a.fx.files.Get(context.Background(), s3store.UploadKey(id))
	if err != nil || !bytes.Equal(got, file) {
		t.Fatalf("assembled file: %d bytes (want %d), equal %v, %v", len(got), size, bytes.Equal(got, file), err)
	}
	// The answer was lost: the retry is the same success.
	alice.do("POST", "/movies/"+id+"/upload/complete", complete).want(http.StatusOK)
	if _, err := a.fx.movies.Commit(context.Background(), id, domain.CompleteIngest{FrameCount: 2, FrameRate: 25, Now: t0,
		Video: domain.Video{Width: 32, Height: 24, Codec: "h264", DurationSeconds: 0.08, ChunkFrames: 60}}); err != nil {
		t.Fatal(err)
	}
	if d := alice.do("POST", "/movies/"+id+"/upload/complete", complete).want(http.StatusOK).detail(); d.Status != domain.StatusReady {
		t.Fatalf("complete after the ingest: %+v", d)
	}
	alice.do("POST", "/movies/"+id+"/upload/abort", map[string]any{"uploadId": up.UploadID}).want(http.StatusNoContent)
	alice.do("POST", "/movies/"+id+"/upload/parts", map[string]any{"uploadId": up.UploadID, "partNumbers": []int{1}}).
		problem(http.StatusConflict, domain.CodeNotAwaitingUpload)
}

// Cancelling an upload in parts: abort discards the parts (a complete then
// names the upload ID), a second abort is the same 204; the movie stays
// awaiting its file until deleted. Both transports.
func TestAbortUploadInParts(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			a := partsAPI(t, tr)
			bob := a.bob()
			size := domain.MinPartBytes + 1
			var created httpapi.MovieCreated
			bob.do("POST", "/movies", partsBody("Cancelled", int64(size))).want(http.StatusCreated).decode(&created)
			up, id := created.Upload, created.Movie.ID
			etag := putPart(t, up.Parts[0].URL, fileOf(domain.MinPartBytes))
			abort := map[string]any{"uploadId": up.UploadID}
			bob.do("POST", "/movies/"+id+"/upload/abort", abort).want(http.StatusNoContent)
			bob.do("POST", "/movies/"+id+"/upload/abort", abort).want(http.StatusNoContent)
			p := bob.do("POST", "/movies/"+id+"/upload/complete", map[string]any{"uploadId": up.UploadID,
				"parts": []map[string]any{{"partNumber": 1, "etag": etag}, {"partNumber": 2, "etag": etag}}}).
				problem(http.StatusUnprocessableEntity, domain.CodeInvalid)
			if p.Field != "uploadId" {
				t.Errorf("complete after abort: %+v", p)
			}
			if _, err := a.fx.files.Head(context.Background(), s3store.UploadKey(id)); err != s3store.ErrNotFound {
				t.Fatalf("a file after abort: %v", err)
			}
			if m := a.row(id); m.Status != domain.StatusAwaitingUpload {
				t.Fatalf("after abort: %s", m.Status)
			}
			bob.do("DELETE", "/movies/"+id, nil).want(http.StatusNoContent)
			bob.do("POST", "/movies/"+id+"/upload/abort", abort).problem(http.StatusNotFound, domain.CodeNotFound)
			bob.do("POST", "/movies/"+id+"/upload/parts", map[string]any{"uploadId": up.UploadID, "partNumbers": []int{1}}).
				problem(http.StatusNotFound, domain.CodeNotFound)
			bob.do("POST", "/movies/mv-nosuchmovie/upload/complete", map[string]any{"uploadId": up.UploadID,
				"parts": []map[string]any{{"partNumber": 1, "etag": etag}}}).problem(http.StatusNotFound, domain.CodeNotFound)
		})
	}
}

// One PUT when the file fits in one part, or when the client did not ask
// for parts; an API without parts configured always answers one PUT.
func TestOnePutUnlessParts(t *testing.T) {
	a := partsAPI(t, transports[1])
	alice := a.alice()
	var c httpapi.MovieCreated
	for _, body := range []map[string]any{
		partsBody("Small", domain.MinPartBytes),
		createBody("Large, one PUT", "l.mp4", "video/mp4", 3*domain.MinPartBytes),
	} {
		alice.do("POST", "/movies", body).want(http.StatusCreated).decode(&c)
		if c.Upload.Method != http.MethodPut || c.Upload.URL == "" || c.Upload.UploadID != "" || len(c.Upload.Parts) != 0 {
			t.Errorf("%v: %+v", body["title"], c.Upload)
		}
	}
	plain := newAPIOn(t, transports[0], tables(t))
	plain.alice().do("POST", "/movies", partsBody("No parts here", 2*domain.MinPartBytes)).want(http.StatusCreated).decode(&c)
	if c.Upload.Method != http.MethodPut {
		t.Errorf("unconfigured: %+v", c.Upload)
	}
	// The limit is stated in the 413, parts or not.
	p := alice.do("POST", "/movies", partsBody("Too large", 4*domain.MinPartBytes+1)).problem(http.StatusRequestEntityTooLarge, domain.CodeFileTooLarge)
	if !strings.Contains(p.Detail, "20971520 bytes (20 MiB)") {
		t.Errorf("413: %q", p.Detail)
	}
}

// Rename through the API, both transports: the list shows the new title and
// who added the movie; another user's editing refuses with the holder, the
// caller's own does not; a deleted movie is gone.
func TestRenameMovie(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			a := newAPI(t, tr)
			alice, bob := a.alice(), a.bob()
			var c httpapi.MovieCreated
			alice.do("POST", "/movies", createBody("Trial 1", "t1.mp4", "video/mp4", 1000)).want(http.StatusCreated).decode(&c)
			id := c.Movie.ID
			if c.Movie.Upload == nil || c.Movie.Upload.AddedBy == nil || !c.Movie.Upload.AddedBy.Yours ||
				!strings.HasPrefix(c.Movie.Upload.AddedBy.UserName, "Alice") {
				t.Fatalf("added by: %+v", c.Movie.Upload)
			}
			if d := bob.do("PUT", "/movies/"+id+"/title", map[string]any{"title": "Trial 1, left arena"}).want(http.StatusOK).detail(); d.Title != "Trial 1, left arena" {
				t.Fatalf("renamed: %+v", d)
			}
			var list httpapi.MovieList
			bob.do("GET", "/movies", nil).want(http.StatusOK).decode(&list)
			var found *httpapi.MovieSummary
			for i := range list.Movies {
				if list.Movies[i].ID == id {
					found = &list.Movies[i]
				}
			}
			if found == nil || found.Title != "Trial 1, left arena" || found.Video != nil || found.AddedBy == nil || found.AddedBy.Yours ||
				!strings.HasPrefix(found.AddedBy.UserName, "Alice") {
				t.Fatalf("listed: %+v", found)
			}
			ready := a.createMovie()
			alice.open(ready).want(http.StatusCreated)
			alice.do("PUT", "/movies/"+ready+"/title", map[string]any{"title": "Mine while editing"}).want(http.StatusOK)
			p := bob.do("PUT", "/movies/"+ready+"/title", map[string]any{"title": "Bob's"}).problem(http.StatusConflict, domain.CodeLeaseHeld)
			if p.Holder == nil || !strings.HasPrefix(p.Holder.UserName, "Alice") || a.row(ready).Title != "Mine while editing" {
				t.Fatalf("refused rename: %+v, title %q", p, a.row(ready).Title)
			}
			bob.do("PUT", "/movies/"+ready+"/title", map[string]any{"title": " padded"}).problem(http.StatusUnprocessableEntity, domain.CodeInvalid)
			bob.do("DELETE", "/movies/"+id, nil).want(http.StatusNoContent)
			bob.do("PUT", "/movies/"+id+"/title", map[string]any{"title": "Gone"}).problem(http.StatusNotFound, domain.CodeNotFound)
			a.anonymous().do("PUT", "/movies/"+ready+"/title", map[string]any{"title": "x"}).problem(http.StatusUnauthorized, httpapi.CodeUnauthenticated)
		})
	}
}

// A file over 5 GiB (S3's largest single PUT) under a larger limit: in
// parts it is created; in one PUT (the client did not ask for parts, or
// the API has none) it is refused at create, with a sentence saying why,
// rather than after the client has sent 5 GiB.
func TestOverFiveGiBGoesInParts(t *testing.T) {
	const limit, size = 16 << 30, 5<<30 + 1
	a := newAPIOn(t, transports[1], tables(t), func(c *httpapi.Config) {
		c.Multipart, c.PartBytes, c.MaxUploadBytes = c.Files.(*s3store.Store), 64<<20, limit
	})
	alice := a.alice()
	var c httpapi.MovieCreated
	alice.do("POST", "/movies", partsBody("Long, in parts", size)).want(http.StatusCreated).decode(&c)
	if c.Upload.Method != httpapi.MethodMultipart || len(c.Upload.Parts) != 81 {
		t.Fatalf("in parts: %s, %d parts", c.Upload.Method, len(c.Upload.Parts))
	}
	p := alice.do("POST", "/movies", createBody("Long, one PUT", "l.mp4", "video/mp4", size)).problem(http.StatusRequestEntityTooLarge, domain.CodeFileTooLarge)
	if !strings.Contains(p.Detail, "cannot be uploaded in one PUT: ask for an upload in parts") {
		t.Errorf("one PUT over 5 GiB: %q", p.Detail)
	}
	alice.do("POST", "/movies", createBody("5 GiB, one PUT", "l.mp4", "video/mp4", 5<<30)).want(http.StatusCreated).decode(&c)
	if c.Upload.Method != http.MethodPut {
		t.Errorf("5 GiB: %+v", c.Upload)
	}
	plain := newAPIOn(t, transports[0], tables(t), func(c *httpapi.Config) { c.MaxUploadBytes = limit })
	p = plain.alice().do("POST", "/movies", partsBody("No parts here", size)).problem(http.StatusRequestEntityTooLarge, domain.CodeFileTooLarge)
	if !strings.Contains(p.Detail, "this API has no upload in parts") {
		t.Errorf("no parts configured: %q", p.Detail)
	}
}

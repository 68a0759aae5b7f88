package stack

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/purge"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// uploadThroughAPI creates a movie with POST /movies and PUTs path to the
// presigned URL it answers, as the page does; it returns the movie's ID.
func uploadThroughAPI(t *testing.T, c client, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	created := c.want(http.StatusCreated, "", "POST", "/movies", map[string]any{"title": filepath.Base(path),
		"fileName": filepath.Base(path), "contentType": "video/mp4", "sizeBytes": len(data)}).json(t)
	id, _ := created["movie"].(map[string]any)["id"].(string)
	up, _ := created["upload"].(map[string]any)
	url, _ := up["url"].(string)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, url, bytes.NewReader(data))
	if err != nil || id == "" {
		t.Fatalf("POST /movies answered %v: %v", created, err)
	}
	for k, v := range up["headers"].(map[string]any) {
		req.Header.Set(k, v.(string))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("PUT of %s: %s", id, res.Status)
	}
	return id
}

// objectsOf lists (ListObjectsV2, every page) the keys of the bucket that
// belong to movie id: its upload and anything under a "<top>/<id>/" prefix.
func objectsOf(t *testing.T, s *Stack, id string) []string {
	t.Helper()
	var keys []string
	pages := s3.NewListObjectsV2Paginator(s.S3, &s3.ListObjectsV2Input{Bucket: aws.String(s.Files.Bucket())})
	for pages.HasMorePages() {
		page, err := pages.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			if k := aws.ToString(o.Key); strings.HasSuffix(k, "/"+id) || strings.Contains(k, "/"+id+"/") {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// Issue 22 item 6: DELETE /movies/{id} of a ready movie with several
// chunks, then the purge that really runs (the local stack's sweeper, as
// the scheduled sweeper Lambda), leaves nothing of the movie in the bucket
// (ListObjectsV2: no upload, no chunk), and a neighbour keeps everything.
// A DELETE repeated (its answer lost) is the same 204, then a 404 once the
// row is gone; the purge replayed with the old row (a sweep whose answer
// was lost) removes nothing more and fails nothing.
func TestDeleteRemovesEveryRenditionThroughTheAPI(t *testing.T) {
	s := startTestStack(t, Options{NoSeed: true, SweepEvery: 200 * time.Millisecond, PurgeGrace: 3 * time.Second})
	alice := client{t: t, base: s.URL, user: "dev-alice", name: "Alice"}
	clip := filepath.Join(t.TempDir(), "three-chunks.mp4")
	// 150 frames: chunks of 60, 60 and 30.
	err := videotest.Encode(t.Context(), clip, videotest.Options{Width: 96, Height: 64, FrameRate: 30, Frames: 150, Codec: videotest.H264},
		func(i int, g []byte) {
			for p := range g {
				g[p] = byte(i + p%96)
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	gone, kept := uploadThroughAPI(t, alice, clip), uploadThroughAPI(t, alice, clip)
	for _, id := range []string{gone, kept} {
		waitReady(t, alice, id)
	}
	before := objectsOf(t, s, gone)
	chunks := 0
	for _, k := range before {
		if strings.HasPrefix(k, media.ChunkPrefix(gone)) {
			chunks++
		}
	}
	if chunks != 3 || len(objectsOf(t, s, kept)) != len(before) {
		t.Fatalf("before the delete: %v (%d chunks), the neighbour has %d objects", before, chunks, len(objectsOf(t, s, kept)))
	}

	alice.want(http.StatusNoContent, "", "DELETE", "/movies/"+gone, nil)
	deleting, err := s.Movies.Get(t.Context(), gone)
	if err != nil || deleting.Status != domain.StatusDeleting {
		t.Fatalf("after DELETE: %s %v", deleting.Status, err)
	}
	alice.want(http.StatusNoContent, "", "DELETE", "/movies/"+gone, nil) // the answer was lost: again
	alice.want(http.StatusNotFound, "not_found", "GET", "/movies/"+gone, nil)

	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := s.Movies.Get(t.Context(), gone)
		if domain.ErrorCode(err) == domain.CodeNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweeper did not purge the row in 2 minutes: %v; objects %v", err, objectsOf(t, s, gone))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if left := objectsOf(t, s, gone); len(left) != 0 {
		t.Fatalf("after the purge: %v", left)
	}
	alice.want(http.StatusNotFound, "not_found", "DELETE", "/movies/"+gone, nil)

	// The purge replayed with the row it read before (its answer lost).
	fin := purge.Finisher{Files: s.Files, Frames: dynamo.NewFrameStore(s.DynamoDB, s.Tables.Frames), Rows: s.Movies, Grace: time.Nanosecond}
	if done, err := fin.Finish(context.WithoutCancel(t.Context()), deleting, time.Now()); err != nil || !done {
		t.Fatalf("the replayed purge: %v %v", done, err)
	}
	if left := objectsOf(t, s, gone); len(left) != 0 {
		t.Fatalf("after the replayed purge: %v", left)
	}
	if n := len(objectsOf(t, s, kept)); n != len(before) {
		t.Fatalf("the neighbour has %d objects, had %d", n, len(before))
	}
	alice.want(http.StatusOK, "", "GET", "/movies/"+kept+"/frames/149/image", nil)
}

// waitReady waits (up to 3 minutes: ingest on a loaded machine) until the
// API shows movie id ready.
func waitReady(t *testing.T, c client, id string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		m := c.want(http.StatusOK, "", "GET", "/movies/"+id, nil).json(t)
		switch m["status"] {
		case "ready":
			return
		case "ingest_failed":
			t.Fatalf("%s: ingest failed: %v", id, m)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready in 3 minutes: %v", id, m)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

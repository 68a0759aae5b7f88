package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/local/stack"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// make import against the local stack (started in-process on the test's
// emulators): a real clip becomes ready; a file that is not a video ends as
// ingest_failed with its summary; a missing file or an empty flag is an
// error before anything is sent.
func TestImportAgainstTheLocalStack(t *testing.T) {
	ddb, sqs := os.Getenv("DYNAMODB_ENDPOINT"), os.Getenv("SQS_ENDPOINT")
	if ddb == "" || sqs == "" {
		t.Fatal("DYNAMODB_ENDPOINT and SQS_ENDPOINT are not set: run the tests with `make test`")
	}
	st, err := stack.Start(t.Context(), stack.Options{DynamoDBEndpoint: ddb, SQSEndpoint: sqs, S3Endpoint: os.Getenv("S3_ENDPOINT"),
		Prefix: testenv.UniqueName(t, "import"), Movies: []domain.Movie{}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Stop() })
	env := func(k string) string {
		if k == "MOVIES_API_URL" {
			return st.URL
		}
		return ""
	}
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.mp4")
	if err := videotest.Encode(t.Context(), clip, videotest.Options{Width: 64, Height: 48, FrameRate: 12, Frames: 24, Codec: videotest.H264},
		func(i int, g []byte) {
			for p := range g {
				g[p] = byte(i*10 + p%7)
			}
		}); err != nil {
		t.Fatal(err)
	}
	if err := run(t.Context(), clip, "Imported clip", time.Minute, env); err != nil {
		t.Fatalf("import: %v", err)
	}
	movies, _, err := st.Movies.List(t.Context())
	if err != nil || len(movies) != 1 || movies[0].Status != domain.StatusReady || movies[0].FrameCount != 24 || movies[0].Title != "Imported clip" {
		t.Fatalf("after import: %+v, %v", movies, err)
	}

	notVideo := filepath.Join(dir, "notes.mp4")
	if err := os.WriteFile(notVideo, []byte("these are my notes, not a movie\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(t.Context(), notVideo, "", time.Minute, env); err == nil || !strings.Contains(err.Error(), "not a video file") {
		t.Fatalf("a text file: %v", err)
	}
	for _, file := range []string{"", filepath.Join(dir, "missing.mp4")} {
		if err := run(t.Context(), file, "", time.Minute, env); err == nil {
			t.Errorf("file %q: no error", file)
		}
	}
}

package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/local/stack"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// TestImportSignsInThroughTheLocalProvider: against a stack that signs in
// (as make run does) and refuses the development headers (no DevAuth),
// make import with no token signs in as Alice through the local OIDC
// provider and the clip becomes ready.
func TestImportSignsInThroughTheLocalProvider(t *testing.T) {
	ddb, sqs := os.Getenv("DYNAMODB_ENDPOINT"), os.Getenv("SQS_ENDPOINT")
	if ddb == "" || sqs == "" {
		t.Fatal("DYNAMODB_ENDPOINT and SQS_ENDPOINT are not set: run the tests with `make test`")
	}
	st, err := stack.Start(t.Context(), stack.Options{DynamoDBEndpoint: ddb, SQSEndpoint: sqs, S3Endpoint: os.Getenv("S3_ENDPOINT"),
		Prefix: testenv.UniqueName(t, "import-oidc"), Movies: []domain.Movie{}, Log: slog.New(slog.DiscardHandler), SignIn: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Stop() })
	clip := filepath.Join(t.TempDir(), "clip.mp4")
	if err := videotest.Encode(t.Context(), clip, videotest.Options{Width: 64, Height: 48, FrameRate: 12, Frames: 12, Codec: videotest.H264},
		func(i int, g []byte) {
			for p := range g {
				g[p] = byte(i*10 + p%5)
			}
		}); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		if k == "MOVIES_API_URL" {
			return st.URL
		}
		return ""
	}
	if err := run(t.Context(), clip, "Signed-in import", time.Minute, env); err != nil {
		t.Fatalf("import: %v", err)
	}
	movies, _, err := st.Movies.List(t.Context())
	if err != nil || len(movies) != 1 || movies[0].Status != domain.StatusReady || movies[0].Title != "Signed-in import" {
		t.Fatalf("after import: %+v, %v", movies, err)
	}
}

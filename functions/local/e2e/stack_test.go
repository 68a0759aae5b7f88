package e2e

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/emulators"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/testenv"
	"github.com/movietrace/tracinglocks/functions/local/stack"
)

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
	return startStackWith(t, out, nil)
}

// startStackWith is startStack with the options changed by mutate (nil:
// none), e.g. to seed the real sample clips instead of the test's rows.
func startStackWith(t *testing.T, out string, mutate func(*stack.Options)) *stack.Stack {
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
	opts := stack.Options{
		DynamoDBEndpoint: ddb, SQSEndpoint: sqs, S3Endpoint: os.Getenv("S3_ENDPOINT"), Prefix: testenv.UniqueName(t, "e2e"),
		LeaseDuration: 30 * time.Second, FrameDelay: 30 * time.Millisecond, ProgressEvery: 500 * time.Millisecond,
		Movies: []domain.Movie{movie, damaged}, FailAt: map[string]int{failingID: failFrame},
		Log: slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	if mutate != nil {
		mutate(&opts)
	}
	st, err := stack.Start(t.Context(), opts)
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

// outputDir is testoutput/e2e/<test> at the repository root (gitignored), emptied.
func outputDir(t *testing.T) string {
	t.Helper()
	tools, err := emulators.ToolsDir() // <root>/.tools
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(tools), "testoutput", "e2e", t.Name())
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// releaseLease takes a lease away behind a page's back, with the beacon
// route (the lease ID is the whole capability).
func releaseLease(t *testing.T, st *stack.Stack, movie, leaseID string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"leaseId": leaseID})
	res, err := http.Post(st.URL+"movies/"+movie+"/analysis-lease/release", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("release: %s", res.Status)
	}
}

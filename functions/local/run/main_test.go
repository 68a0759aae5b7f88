package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// TestRunUsesTheGivenEndpoints: `make run` with DYNAMODB_ENDPOINT and
// SQS_ENDPOINT set (here, the emulators `make test` started) starts no
// emulator of its own (its tools directory is empty: starting one would
// have to install it first), builds its tables on the given DynamoDB,
// serves the page and API, and stops cleanly on SIGINT without stopping the
// emulators it did not start.
func TestRunUsesTheGivenEndpoints(t *testing.T) {
	ddb := testenv.DynamoDB(t) // fails clearly without the emulators
	testenv.SQS(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "run")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-addr", "127.0.0.1:0", "-dev-only", "-tools", filepath.Join(dir, "empty-tools"))
	cmd.Env = append(os.Environ(), "S3_ENDPOINT=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()

	// The banner names the page's URL and the endpoints in use.
	var url, banner string
	lines := bufio.NewScanner(stdout)
	for url == "" && lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		if strings.HasPrefix(line, "Ready in") {
			banner = line
		}
		if u, ok := strings.CutPrefix(line, "Open "); ok {
			url = strings.TrimSuffix(u, " in a browser.")
		}
	}
	if url == "" {
		t.Fatalf("no URL printed; stderr:\n%s", stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	for _, ep := range []string{os.Getenv("DYNAMODB_ENDPOINT"), os.Getenv("SQS_ENDPOINT")} {
		if !strings.Contains(banner, ep) {
			t.Errorf("banner %q does not name %s", banner, ep)
		}
	}
	if !strings.Contains(stderr.String(), "using DYNAMODB_ENDPOINT=") || !strings.Contains(stderr.String(), "using SQS_ENDPOINT=") {
		t.Errorf("stderr does not say which endpoints it reused:\n%s", stderr.String())
	}

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"movies", nil)
	req.Header.Set("X-Dev-User", "dev-alice")
	req.Header.Set("X-Dev-User-Name", "Alice")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "zebrafish-larva") {
		t.Fatalf("GET /movies: %d %s", res.StatusCode, body)
	}
	if _, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: new("local-movies")}); err != nil {
		t.Errorf("the movies table is not on the given DynamoDB: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGINT: %v\nstderr:\n%s", err, stderr.String())
	}
	if _, err := ddb.ListTables(t.Context(), &dynamodb.ListTablesInput{}); err != nil {
		t.Errorf("the given DynamoDB stopped with make run: %v", err)
	}
	// make run caches its generated sample clips in tools/samples; anything
	// else there would be an emulator install.
	entries, _ := os.ReadDir(filepath.Join(dir, "empty-tools"))
	for _, e := range entries {
		if e.Name() != "samples" {
			t.Errorf("make run installed emulators although none was needed: %s", e.Name())
		}
	}
}

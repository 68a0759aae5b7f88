package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// TestMakeSmokeAgainstMakeRun: `make run` as a developer starts it (sign-in
// through the local OIDC provider, DEV_AUTH unset, so the API refuses the
// development headers), then `make smoke` against it: the curl walk signs
// Alice and Bob in through the provider (code flow with PKCE) and every
// route answers as expected, the trace included.
func TestMakeSmokeAgainstMakeRun(t *testing.T) {
	testenv.DynamoDB(t) // fails clearly without the emulators
	testenv.SQS(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "run")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-addr", "127.0.0.1:0", "-frame-delay", "1ms", "-tools", filepath.Join(dir, "tools"))
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, httpapi.EnvDevAuth+"=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "S3_ENDPOINT=")
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
	url := ""
	lines := bufio.NewScanner(stdout)
	for url == "" && lines.Scan() {
		if u, ok := strings.CutPrefix(strings.TrimSpace(lines.Text()), "Open "); ok {
			url = strings.TrimSuffix(u, " in a browser.")
		}
	}
	if url == "" {
		t.Fatalf("no URL printed; stderr:\n%s", stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	smoke := exec.CommandContext(ctx, "make", "-s", "-C", "../../..", "smoke", "SMOKE_URL="+url)
	smoke.Env = env
	out, err := smoke.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "requests answered as expected") {
		t.Fatalf("make smoke: %v\n%s\nmake run's stderr:\n%s", err, out, stderr.String())
	}
	if strings.Contains(string(out), "X-Dev-User") {
		t.Errorf("the walk mentions development headers:\n%s", out)
	}
	t.Logf("%s", out)

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGINT: %v\nstderr:\n%s", err, stderr.String())
	}
}

package main

import (
	"bytes"
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bin is this command, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "withemulators-test-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "withemulators")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is our environment without the emulator endpoints (make test sets
// them), plus extra.
func env(extra ...string) []string {
	return append(withEnv(os.Environ(), []string{"DYNAMODB_ENDPOINT=", "SQS_ENDPOINT=", "S3_ENDPOINT="}), extra...)
}

// The whole path: emulators start, the command sees them and the local AWS
// settings (overriding the caller's credentials), its exit code comes back,
// and the emulators are gone afterwards.
func TestRunsCommandAgainstFreshEmulators(t *testing.T) {
	cmd := exec.Command(bin, "--", "sh", "-c",
		`echo "$DYNAMODB_ENDPOINT $SQS_ENDPOINT $AWS_REGION $AWS_ACCESS_KEY_ID $AWS_SECRET_ACCESS_KEY"; exit 3`)
	cmd.Env = env("AWS_ACCESS_KEY_ID=AKIAREALKEY", "AWS_SECRET_ACCESS_KEY=real")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("exit: %v, want exit status 3\nstderr:\n%s", err, stderr.String())
	}
	fields := strings.Fields(stdout.String())
	if len(fields) != 5 {
		t.Fatalf("command printed %q, want 5 fields\nstderr:\n%s", stdout.String(), stderr.String())
	}
	if got, want := fields[2:], []string{"us-east-1", "local", "local"}; !slices.Equal(got, want) {
		t.Errorf("AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY = %v, want %v", got, want)
	}
	for _, endpoint := range fields[:2] {
		u, err := url.Parse(endpoint)
		if err != nil || u.Scheme != "http" || u.Hostname() != "127.0.0.1" || u.Port() == "" {
			t.Errorf("endpoint %q is not http://127.0.0.1:<port>", endpoint)
			continue
		}
		if c, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after withemulators exited", endpoint)
		}
	}
}

// With both endpoints set, nothing is started, and a SIGTERM to
// withemulators reaches the command, whose exit code comes back.
func TestReusesEndpointsAndForwardsSignals(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "trapped")
	cmd := exec.Command(bin, "--", "sh", "-c",
		`trap 'echo "$DYNAMODB_ENDPOINT $SQS_ENDPOINT" > `+marker+`; exit 7' TERM; echo ready; while :; do sleep 0.1; done`)
	cmd.Env = append(env(), "DYNAMODB_ENDPOINT=http://127.0.0.1:1111", "SQS_ENDPOINT=http://127.0.0.1:2222")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, len("ready\n"))
	if _, err := stdout.Read(line); err != nil || string(line) != "ready\n" {
		t.Fatalf("command did not start: %q, %v\nstderr:\n%s", line, err, stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Fatalf("exit: %v, want exit status 7 (the command's trap)\nstderr:\n%s", err, stderr.String())
	}
	got, _ := os.ReadFile(marker)
	if want := "http://127.0.0.1:1111 http://127.0.0.1:2222\n"; string(got) != want {
		t.Errorf("command saw endpoints %q, want the caller's %q", got, want)
	}
	if !strings.Contains(stderr.String(), "using the running emulators") {
		t.Errorf("stderr does not say it reused the endpoints:\n%s", stderr.String())
	}
}

func TestUnknownCommandExits127(t *testing.T) {
	cmd := exec.Command(bin, "--", "/nonexistent/command")
	cmd.Env = append(env(), "DYNAMODB_ENDPOINT=http://127.0.0.1:1111", "SQS_ENDPOINT=http://127.0.0.1:2222")
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 127 {
		t.Fatalf("exit: %v, want exit status 127", err)
	}
}

func TestWithEnv(t *testing.T) {
	got := withEnv(
		[]string{"A=1", "AWS_REGION=eu-west-1", "B=2", "AWS_REGION=dup"},
		[]string{"AWS_REGION=us-east-1", "C=3"},
	)
	want := []string{"A=1", "B=2", "AWS_REGION=us-east-1", "C=3"}
	if !slices.Equal(got, want) {
		t.Errorf("withEnv = %v, want %v", got, want)
	}
}

// With only DYNAMODB_ENDPOINT set (say, a fault-injecting proxy in front of
// DynamoDB Local), it is passed on as it is and only fauxqs starts, serving
// SQS and S3.
func TestStartsOnlyTheMissingEmulator(t *testing.T) {
	cmd := exec.Command(bin, "--", "sh", "-c", `echo "$DYNAMODB_ENDPOINT $SQS_ENDPOINT $S3_ENDPOINT"`)
	cmd.Env = append(env("S3_ENDPOINT="), "DYNAMODB_ENDPOINT=http://127.0.0.1:1111")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
	}
	fields := strings.Fields(stdout.String())
	if len(fields) != 3 || fields[0] != "http://127.0.0.1:1111" || fields[1] == fields[0] || fields[2] != fields[1] {
		t.Fatalf("command saw %q, want the given DynamoDB endpoint and one fresh fauxqs for SQS and S3\nstderr:\n%s", stdout.String(), stderr.String())
	}
	if strings.Contains(stderr.String(), "DynamoDB Local at") || !strings.Contains(stderr.String(), "fauxqs (SQS) at "+fields[1]) {
		t.Errorf("stderr does not show fauxqs alone starting:\n%s", stderr.String())
	}
}

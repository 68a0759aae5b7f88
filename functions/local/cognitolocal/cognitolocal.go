// Package cognitolocal runs cognito-local (npm, pinned), a local emulator of
// the Cognito user pools API, for the test of `make user`: the target's
// AdminCreateUser call runs against it instead of a deployed user pool.
// There is no CloudFormation here, so the test passes the pool ID the
// target would otherwise read from the stack's outputs (USER_POOL_ID).
package cognitolocal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Package and Version are the pinned npm package.
const (
	Package = "cognito-local"
	Version = "5.3.0"
)

// Ensure installs the package into tools/cognito-local-<Version> unless it
// is there, and returns that directory. The install goes to a temporary
// directory first and is renamed into place, so concurrent callers never
// see half an install.
func Ensure(ctx context.Context, tools string) (string, error) {
	dir := filepath.Join(tools, Package+"-"+Version)
	if _, err := os.Stat(bin(dir)); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(tools, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(tools, Package+"-install-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(os.Stderr, "cognitolocal: installing %s@%s into %s (once)\n", Package, Version, dir)
	cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", tmp, "--no-audit", "--no-fund", "--no-save",
		"--ignore-scripts", "--loglevel=error", Package+"@"+Version)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install %s@%s: %w\n%s", Package, Version, err, out)
	}
	if _, err := os.Stat(bin(tmp)); err != nil {
		return "", fmt.Errorf("npm install finished but: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(bin(dir)); serr != nil { // not a concurrent install that won
			return "", err
		}
	}
	return dir, nil
}

func bin(dir string) string { return filepath.Join(dir, "node_modules", ".bin", Package) }

// Emulator is a running cognito-local.
type Emulator struct {
	// URL is its endpoint, e.g. http://127.0.0.1:PORT.
	URL string
	cmd *exec.Cmd
}

// Start runs the emulator installed in dir on a free loopback port, with
// its state in data (a fresh directory), and waits until it answers.
func Start(ctx context.Context, dir, data string, log io.Writer) (*Emulator, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin(dir))
	cmd.Dir = data
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "HOST=127.0.0.1")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	e := &Emulator{URL: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := e.Call(ctx, "ListUserPools", map[string]any{"MaxResults": 1}); err == nil {
			return e, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			e.Stop()
			return nil, errors.New("cognito-local did not answer within 60 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Stop ends the emulator.
func (e *Emulator) Stop() {
	_ = e.cmd.Process.Kill()
	_ = e.cmd.Wait()
}

// Call makes one Cognito user pools API call (the AWS JSON 1.1 protocol)
// and returns the decoded answer; an error answer is an error.
func (e *Emulator) Call(ctx context.Context, action string, in any) (map[string]any, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+"/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "AWSCognitoIdentityProviderService."+action)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s: %s", action, res.Status, b)
	}
	out := map[string]any{}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, fmt.Errorf("%s: %w", action, err)
		}
	}
	return out, nil
}

// syncWriter is a writer safe for the emulator's two output streams.
type syncWriter struct {
	mu sync.Mutex
	b  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

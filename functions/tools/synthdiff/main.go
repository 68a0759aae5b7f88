// Command synthdiff synthesizes the stack's CloudFormation template at two
// commits and shows how they differ once asset hashes are set aside
// (issue 21: "the synthesized templates identical except for asset
// paths"). Each commit is checked out in its own detached worktree under a
// temporary directory (removed afterwards) and synthesized offline as
// `make synth` does (`go run ./infra`), with placeholder function binaries
// and ffmpeg layer (their contents only change asset hashes) and the
// commit's own page (make web-dist). The templates are rewritten with
// every asset hash (64 hex digits) replaced by <hash>, keys sorted, and
// compared with diff -u.
//
//	go run ./functions/tools/synthdiff -before 6865634^ -after 936b2c3,HEAD [-env dev] [-out dir]
//
// -after may name several commits (comma-separated): each is compared with
// -before, which is synthesized once. It exits 0 when every normalised
// template is identical to -before's, 1 when one differs (the diffs are
// printed), 2 on a failure to synthesize.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

func main() {
	before := flag.String("before", "", "the commit to compare from (required)")
	after := flag.String("after", "HEAD", "the commits to compare to, comma-separated")
	env := flag.String("env", "dev", "the environment of cdk.json to synthesize")
	out := flag.String("out", "", "keep the normalised templates in this directory (default: a temporary one)")
	flag.Parse()
	if *before == "" {
		fmt.Fprintln(os.Stderr, "usage: synthdiff -before <commit> [-after <commit>] [-env dev] [-out dir]")
		os.Exit(2)
	}
	same, err := run(*before, strings.Split(*after, ","), *env, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "synthdiff:", err)
		os.Exit(2)
	}
	if !same {
		os.Exit(1)
	}
}

func run(before string, after []string, env, out string) (bool, error) {
	tmp, err := os.MkdirTemp("", "synthdiff-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	if out == "" {
		out = tmp
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		return false, err
	}
	var files []string
	for i, rev := range append([]string{before}, after...) {
		sum, err := git("rev-parse", "--short", rev+"^{commit}")
		if err != nil {
			return false, err
		}
		tree := filepath.Join(tmp, fmt.Sprintf("tree%d", i))
		if _, err := git("worktree", "add", "--detach", tree, sum); err != nil {
			return false, err
		}
		tpl, err := synth(tree, env)
		if _, rmErr := git("worktree", "remove", "--force", tree); rmErr != nil && err == nil {
			err = rmErr
		}
		if err != nil {
			return false, fmt.Errorf("synthesize %s (%s): %w", rev, sum, err)
		}
		norm, err := normalise(tpl)
		if err != nil {
			return false, fmt.Errorf("%s: %w", rev, err)
		}
		name := filepath.Join(out, fmt.Sprintf("%d-%s.template.json", i, sum))
		if err := os.WriteFile(name, norm, 0o644); err != nil {
			return false, err
		}
		files = append(files, name)
		fmt.Printf("synthesized %s (%s): %d bytes normalised -> %s\n", rev, sum, len(norm), name)
	}
	same := true
	for i, f := range files[1:] {
		fmt.Printf("--- %s against %s\n", after[i], before)
		diff := exec.Command("diff", "-u", files[0], f)
		diff.Stdout, diff.Stderr = os.Stdout, os.Stderr
		err := diff.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
			fmt.Println("identical once asset hashes are set aside")
		case errors.As(err, &exit) && exit.ExitCode() == 1:
			same = false
		default:
			return false, err
		}
	}
	return same, nil
}

// synth builds a commit's template in its worktree: placeholder binaries
// for every function (build/<name>/bootstrap) and the ffmpeg layer, the
// commit's own page (make web-dist), then go run ./infra.
func synth(tree, env string) ([]byte, error) {
	fns, err := os.ReadDir(filepath.Join(tree, "functions"))
	if err != nil {
		return nil, err
	}
	for _, fn := range fns {
		if _, err := os.Stat(filepath.Join(tree, "functions", fn.Name(), "main.go")); err != nil {
			continue
		}
		if err := put(filepath.Join(tree, "build", fn.Name(), "bootstrap"), "placeholder "+fn.Name()); err != nil {
			return nil, err
		}
	}
	for _, bin := range []string{"ffmpeg", "ffprobe"} {
		if err := put(filepath.Join(tree, "build", "ffmpeg-layer", "bin", bin), "placeholder "+bin); err != nil {
			return nil, err
		}
	}
	if err := command(tree, nil, "make", "--no-print-directory", "web-dist"); err != nil {
		return nil, err
	}
	cdkOut := filepath.Join(tree, "cdk.out")
	vars := []string{"CDK_OUTDIR=" + cdkOut, `CDK_CONTEXT_JSON={"env":"` + env + `"}`,
		"JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1", "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20"}
	if err := command(tree, vars, "go", "run", "./infra"); err != nil {
		return nil, err
	}
	matches, err := filepath.Glob(filepath.Join(cdkOut, "*-"+env+".template.json"))
	if err != nil || len(matches) != 1 {
		return nil, fmt.Errorf("want one %s template in %s, found %v (%v)", env, cdkOut, matches, err)
	}
	return os.ReadFile(matches[0])
}

// assetHash is a CDK asset hash (SHA-256, hex), as it appears in S3 keys,
// asset parameters and metadata.
var assetHash = regexp.MustCompile(`[0-9a-f]{64}`)

// normalise replaces every asset hash in the template's strings (and keys)
// by <hash> and writes it with sorted keys, indented.
func normalise(tpl []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(tpl, &v); err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rewrite(v)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func rewrite(v any) any {
	switch x := v.(type) {
	case string:
		return assetHash.ReplaceAllString(x, "<hash>")
	case []any:
		for i := range x {
			x[i] = rewrite(x[i])
		}
		return x
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[assetHash.ReplaceAllString(k, "<hash>")] = rewrite(e)
		}
		return m
	}
	return v
}

func put(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content+"\n"), 0o755)
}

func git(args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command("git", args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

func command(dir string, env []string, name string, args ...string) error {
	var errb bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &errb, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, lastLines(errb.String(), 20))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Command mutate is the hand-mutation test of the repository's tests
// (`make mutate`): for each mutant of a list it applies one textual change to
// one product file, runs that package's tests (a narrow -run set), reverts
// the file, and counts the mutant killed when the tests fail, survived when
// they pass. It reports killed and survived per package and fails when a
// package's kill rate is below -min.
//
//	go run ./functions/tools/mutate [-list FILE] [-only PREFIX] [-repeat N] [-min 0.95] [-check]
//
// Tests that need DynamoDB Local or the SQS/S3 emulator read their endpoints
// from the environment: run it under withemulators (the Makefile target does),
// so the emulators start once for the whole list.
//
// The list (default mutants.txt beside this file) holds one mutant per
// block of "key: value" lines separated by a blank line; "#" starts a comment
// line:
//
//	id:   domain-stale-le
//	pkg:  ./domain
//	file: domain/rule.go
//	run:  TestFinalizeStaleTrace|TestTakeover
//	from: return Cmp(FieldLeaseExpiresAt, OpLe, now)
//	to:   return Cmp(FieldLeaseExpiresAt, OpLt, now)
//
// "from" must occur exactly once in the file; "\n" and "\t" in from and to
// stand for a newline and a tab. A mutant whose package no longer builds is
// reported invalid (a mutant must be a program the compiler accepts, or it
// tests the compiler), never counted as killed. The file is restored after
// each mutant, on a failure and on SIGINT/SIGTERM.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Mutant is one hand mutation.
type Mutant struct {
	ID, Pkg, File, Run, From, To string
	Line                         int // where the block starts in the list
}

// Verdict is what the tests did with a mutant.
type Verdict string

const (
	Killed   Verdict = "killed"
	Survived Verdict = "survived"
	Invalid  Verdict = "invalid"
)

func main() {
	list := flag.String("list", "functions/tools/mutate/mutants.txt", "the list of mutants")
	only := flag.String("only", "", "run only the mutants whose id starts with this prefix")
	repeat := flag.Int("repeat", 1, "runs per mutant; killed only if every run fails (tests with random inputs)")
	minRate := flag.Float64("min", 0.95, "least kill rate of each package")
	timeout := flag.Duration("timeout", 5*time.Minute, "go test's -timeout per run")
	check := flag.Bool("check", false, "only check that every mutant applies (its from occurs once), run no test")
	flag.Parse()
	f, err := os.Open(*list)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(2)
	}
	ms, err := Parse(f)
	f.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(2)
	}
	var sel []Mutant
	for _, m := range ms {
		if strings.HasPrefix(m.ID, *only) {
			sel = append(sel, m)
		}
	}
	if *check {
		bad := 0
		for _, m := range sel {
			src, err := os.ReadFile(filepath.Clean(m.File))
			if err == nil {
				_, err = Apply(src, m)
			}
			if err != nil {
				bad++
				fmt.Printf("%s (line %d): %v\n", m.ID, m.Line, err)
			}
		}
		fmt.Printf("%d mutants, %d do not apply\n", len(sel), bad)
		if bad > 0 {
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	results := map[string]map[Verdict][]string{}
	for i, m := range sel {
		v, detail, err := Try(ctx, m, *repeat, *timeout)
		if err != nil {
			fmt.Fprintf(os.Stderr, "mutate: %s: %v\n", m.ID, err)
			os.Exit(2)
		}
		fmt.Printf("[%d/%d] %-8s %s (%s) %s\n", i+1, len(sel), v, m.ID, m.Pkg, detail)
		if results[m.Pkg] == nil {
			results[m.Pkg] = map[Verdict][]string{}
		}
		results[m.Pkg][v] = append(results[m.Pkg][v], m.ID)
	}
	if !Report(os.Stdout, results, *minRate) {
		os.Exit(1)
	}
}

// Parse reads a list of mutants.
func Parse(r io.Reader) ([]Mutant, error) {
	var out []Mutant
	var cur *Mutant
	seen := map[string]bool{}
	flush := func() error {
		if cur == nil {
			return nil
		}
		m := *cur
		cur = nil
		switch {
		case m.ID == "" || m.Pkg == "" || m.File == "" || m.From == "":
			return fmt.Errorf("line %d: a mutant needs id, pkg, file and from", m.Line)
		case seen[m.ID]:
			return fmt.Errorf("line %d: mutant %s listed twice", m.Line, m.ID)
		case m.From == m.To:
			return fmt.Errorf("line %d: mutant %s changes nothing", m.Line, m.ID)
		}
		seen[m.ID] = true
		out = append(out, m)
		return nil
	}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		if line == "" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: want key: value, got %q", n, line)
		}
		if cur == nil {
			cur = &Mutant{Line: n}
		}
		v = unescape(strings.TrimSpace(v))
		switch strings.TrimSpace(k) {
		case "id":
			cur.ID = v
		case "pkg":
			cur.Pkg = v
		case "file":
			cur.File = v
		case "run":
			cur.Run = v
		case "from":
			cur.From = v
		case "to":
			cur.To = v
		default:
			return nil, fmt.Errorf("line %d: unknown key %q", n, k)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

func unescape(s string) string { return strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(s) }

// Apply returns src with m's change, or an error unless m.From occurs in
// src exactly once.
func Apply(src []byte, m Mutant) ([]byte, error) {
	if c := bytes.Count(src, []byte(m.From)); c != 1 {
		return nil, fmt.Errorf("%q occurs %d times in %s, want once", m.From, c, m.File)
	}
	return bytes.Replace(src, []byte(m.From), []byte(m.To), 1), nil
}

// Try applies m, runs its package's tests repeat times and restores the file.
func Try(ctx context.Context, m Mutant, repeat int, timeout time.Duration) (Verdict, string, error) {
	path := filepath.Clean(m.File)
	orig, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	mutated, err := Apply(orig, m)
	if err != nil {
		return "", "", err
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(path, mutated, info.Mode()); err != nil {
		return "", "", err
	}
	defer func() {
		if err := os.WriteFile(path, orig, info.Mode()); err != nil {
			fmt.Fprintf(os.Stderr, "mutate: RESTORE %s BY HAND (git checkout -- %s): %v\n", path, path, err)
		}
	}()
	failed := 0
	detail := ""
	for range max(repeat, 1) {
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		args := []string{"test", "-count=1", "-timeout=" + timeout.String()}
		if m.Run != "" {
			args = append(args, "-run", m.Run)
		}
		cmd := exec.CommandContext(ctx, "go", append(args, m.Pkg)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		text := out.String()
		if strings.Contains(text, "[build failed]") || strings.Contains(text, "[setup failed]") {
			return Invalid, firstLine(text, "error"), nil
		}
		var ee *exec.ExitError
		switch {
		case err == nil:
			if strings.Contains(text, "no tests to run") {
				return Invalid, "-run matches no test", nil
			}
		case errors.As(err, &ee):
			failed++
			detail = firstLine(text, "--- FAIL")
		default:
			return "", "", err
		}
	}
	if failed == max(repeat, 1) {
		return Killed, detail, nil
	}
	if failed > 0 {
		return Survived, fmt.Sprintf("killed in %d of %d runs only", failed, repeat), nil
	}
	return Survived, "", nil
}

// firstLine returns the first line of text containing want, trimmed.
func firstLine(text, want string) string {
	for l := range strings.SplitSeq(text, "\n") {
		if strings.Contains(l, want) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// Report prints the verdicts per package and whether every package with a
// valid mutant reached min.
func Report(w io.Writer, results map[string]map[Verdict][]string, min float64) bool {
	pkgs := make([]string, 0, len(results))
	for p := range results {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	ok := true
	var killed, total int
	fmt.Fprintln(w, "\npackage                                  killed survived invalid  rate")
	for _, p := range pkgs {
		r := results[p]
		k, s := len(r[Killed]), len(r[Survived])
		killed, total = killed+k, total+k+s
		rate := 1.0
		if k+s > 0 {
			rate = float64(k) / float64(k+s)
		}
		mark := ""
		if rate < min {
			ok, mark = false, fmt.Sprintf("  below %.0f%%", 100*min)
		}
		fmt.Fprintf(w, "%-40s %6d %8d %7d %5.1f%%%s\n", p, k, s, len(r[Invalid]), 100*rate, mark)
		if len(r[Survived]) > 0 {
			fmt.Fprintf(w, "    survived: %s\n", strings.Join(r[Survived], ", "))
		}
		if len(r[Invalid]) > 0 {
			fmt.Fprintf(w, "    invalid: %s\n", strings.Join(r[Invalid], ", "))
		}
	}
	if total > 0 {
		fmt.Fprintf(w, "all: %d of %d killed (%.1f%%)\n", killed, total, 100*float64(killed)/float64(total))
	}
	return ok
}

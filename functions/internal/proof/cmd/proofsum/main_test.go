package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSumsAndOrdersCounts(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte("proof-count histories=10 violations=0 zeta=1\nother output\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("proof-count fuzz_execs=5 histories=2 alpha=3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sums, err := read([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := line(sums), "proof: histories=12 violations=0 fuzz_execs=5 alpha=3 zeta=1"; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestRefusesNothingAndGarbage(t *testing.T) {
	dir := t.TempDir()
	empty, bad := filepath.Join(dir, "empty"), filepath.Join(dir, "bad")
	_ = os.WriteFile(empty, []byte("no counts here\n"), 0o644)
	_ = os.WriteFile(bad, []byte("proof-count histories=many\n"), 0o644)
	for _, p := range []string{empty, bad, filepath.Join(dir, "missing")} {
		if _, err := read([]string{p}); err == nil {
			t.Errorf("%s: no error", filepath.Base(p))
		}
	}
}

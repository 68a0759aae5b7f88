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

// TestFaultSuiteCountsComeFirstAndFail: the fault suite's verdicts follow
// the histories' in the summary line, and any of them not 0 fails it.
func TestFaultSuiteCountsComeFirstAndFail(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	counts := "proof-count histories=3 violations=0 fuzz_execs=9\n" +
		"proof-count faults=5 poison_records=2 poison_lost=0\n" +
		"proof-count segment_runs=1 orphaned_leases=0 unterminated_jobs=0 mixed_frames=0 mixed_marker_sets=0 audit_mismatches=0 lost_responses=4 poison_records=1 poison_lost=0\n"
	if err := os.WriteFile(a, []byte(counts), 0o644); err != nil {
		t.Fatal(err)
	}
	sums, err := read([]string{a})
	if err != nil {
		t.Fatal(err)
	}
	want := "proof: histories=3 violations=0 orphaned_leases=0 unterminated_jobs=0 mixed_frames=0 mixed_marker_sets=0 audit_mismatches=0 poison_lost=0 faults=5 poison_records=3 lost_responses=4 fuzz_execs=9 segment_runs=1"
	if got := line(sums); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if failed(sums) {
		t.Fatal("all-zero verdicts failed the summary")
	}
	for _, k := range mustBeZero {
		bad := map[string]int64{k: 1}
		if !failed(bad) {
			t.Errorf("%s=1 does not fail the summary", k)
		}
	}
}

// TestChaosCountsAreRequired: the chaos run's verdicts must be in the
// summary; a file without them is missing them, one with them is not.
func TestChaosCountsAreRequired(t *testing.T) {
	if m := missing(map[string]int64{"histories": 1}); len(m) != len(required) {
		t.Fatalf("missing %v", m)
	}
	sums := map[string]int64{"ghost_movies": 0, "orphaned_objects": 0, "sources_at_risk": 0}
	if m := missing(sums); len(m) != 0 || failed(sums) {
		t.Fatalf("missing %v, failed %v", m, failed(sums))
	}
	if got := line(sums); got != "proof: ghost_movies=0 orphaned_objects=0 sources_at_risk=0" {
		t.Fatalf("line %q", got)
	}
}

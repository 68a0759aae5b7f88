// Command proofsum adds up the "proof-count key=value ..." lines the parts
// of the proof suite append to one file ($PROOF_COUNTS) and prints the one
// summary line `make proof` ends with:
//
//	proof: histories=1000 violations=0 faults=... fuzz_execs=... ...
//
// Keys are summed across lines; the well-known ones come first, in a fixed
// order (the fault suite's verdicts right after the histories'), the rest
// alphabetically. It exits 1 if the file is missing or empty, if any
// violation was counted (violations, or a fault-suite verdict other than
// 0), or if a required count is missing (the chaos run's), so the summary
// can never read as a pass when nothing ran.
//
//	proofsum FILE...
package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

var first = []string{"histories", "violations",
	// The fault suite's verdicts (issue 12), each of which must be 0: leases
	// left behind, started jobs with no terminal state once the sweeper ran,
	// frames of two jobs or two marker sets mixed, audit items per real
	// transition other than one, poison records never set aside; then what
	// was injected.
	"orphaned_leases", "unterminated_jobs", "mixed_frames", "mixed_marker_sets", "audit_mismatches", "poison_lost",
	// The movie lifecycle under lost answers and kills (issue 20, the
	// chaos run): movies nobody created or that outlived their delete,
	// objects and frame rows of movies that do not exist, ingested movies
	// whose source is still tagged pending, movies or traces not ended.
	"ghost_movies", "orphaned_objects", "sources_at_risk", "unsettled_movies", "unended_traces",
	"faults", "poison_records", "lost_responses", "fuzz_execs"}

// mustBeZero are the counts that fail the summary when not 0.
var mustBeZero = []string{"violations", "orphaned_leases", "unterminated_jobs", "mixed_frames", "mixed_marker_sets", "audit_mismatches", "poison_lost",
	"ghost_movies", "orphaned_objects", "sources_at_risk", "unsettled_movies", "unended_traces"}

// required are the counts `make proof` must have counted: the summary
// fails when one is missing (its part did not run), so a 0 is never read
// off a suite that was skipped.
var required = []string{"ghost_movies", "orphaned_objects", "sources_at_risk"}

// missing returns the required counts absent from sums.
func missing(sums map[string]int64) []string {
	var out []string
	for _, k := range required {
		if _, ok := sums[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

func main() {
	sums, err := read(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "proofsum:", err)
		os.Exit(1)
	}
	fmt.Println(line(sums))
	if m := missing(sums); len(m) > 0 {
		fmt.Fprintln(os.Stderr, "proofsum: not counted (its part of the suite did not run):", strings.Join(m, ", "))
		os.Exit(1)
	}
	if failed(sums) {
		os.Exit(1)
	}
}

func read(paths []string) (map[string]int64, error) {
	if len(paths) == 0 {
		return nil, errors.New("usage: proofsum FILE")
	}
	sums := map[string]int64{}
	lines := 0
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) == 0 || fields[0] != "proof-count" {
				continue
			}
			lines++
			for _, kv := range fields[1:] {
				k, v, ok := strings.Cut(kv, "=")
				n, err := strconv.ParseInt(v, 10, 64)
				if !ok || k == "" || err != nil {
					f.Close()
					return nil, fmt.Errorf("%s: bad count %q", p, kv)
				}
				sums[k] += n
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	if lines == 0 {
		return nil, fmt.Errorf("no proof-count lines in %s", strings.Join(paths, ", "))
	}
	return sums, nil
}

func line(sums map[string]int64) string {
	var keys []string
	for _, k := range first {
		if _, ok := sums[k]; ok {
			keys = append(keys, k)
		}
	}
	var rest []string
	for k := range sums {
		if !slices.Contains(first, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	parts := []string{"proof:"}
	for _, k := range append(keys, rest...) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, sums[k]))
	}
	return strings.Join(parts, " ")
}

// failed reports whether any count that must be 0 is not.
func failed(sums map[string]int64) bool {
	for _, k := range mustBeZero {
		if sums[k] != 0 {
			return true
		}
	}
	return false
}

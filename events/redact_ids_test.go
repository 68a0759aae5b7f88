package events

import (
	"strings"
	"testing"
)

const anID = "0123456789abcdef0123456789abcdef"

// TestRedactIDs: every hex run of an ID's length or more goes, whole; shorter
// runs (versions, sequence numbers, short hashes) stay.
func TestRedactIDs(t *testing.T) {
	for in, want := range map[string]string{
		"":                                     "",
		"lease " + anID + " lost":              "lease [redacted] lost",
		"lease " + strings.ToUpper(anID):       "lease [redacted]",
		"abc" + anID:                           "[redacted]", // glued: not "[redacted]def"-style leftovers
		anID + "0123456789":                    "[redacted]", // a 42-digit run, whole
		"x" + anID[:31] + "y":                  "x" + anID[:31] + "y",
		anID + "-" + anID:                      "[redacted]-[redacted]",
		"version 12 seq 900000000000000000001": "version 12 seq 900000000000000000001",
		"sha 0123456789abcdef0123456789abcdef01234567": "sha [redacted]",
	} {
		if got := RedactIDs(in); got != want {
			t.Errorf("RedactIDs(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzRedactIDs: no run of 32 hex digits survives, text without one comes
// back unchanged, and redacting twice changes nothing more.
func FuzzRedactIDs(f *testing.F) {
	for _, s := range []string{"", anID, "abc" + anID + "xyz", "é" + anID, "[redacted]" + anID[:31]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := RedactIDs(s)
		if longestHexRun(out) >= MinRedactedRun {
			t.Fatalf("RedactIDs(%q) = %q keeps an ID-length hex run", s, out)
		}
		if longestHexRun(s) < MinRedactedRun && out != s {
			t.Fatalf("RedactIDs(%q) = %q changed text without an ID", s, out)
		}
		if again := RedactIDs(out); again != out {
			t.Fatalf("not idempotent: %q then %q", out, again)
		}
	})
}

func longestHexRun(s string) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

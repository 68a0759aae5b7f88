package domain

import (
	"regexp"
	"strings"
	"unicode"
)

// MaxSummary bounds a failure summary: one short user-facing sentence.
const MaxSummary = 200

// GenericFailureSummary replaces a summary that sanitizing leaves empty.
const GenericFailureSummary = "Tracing failed because of an internal error."

// Patterns of text that must never reach a user-facing summary or the audit
// table. The worker already maps errors to safe messages; this is the second
// line of defence for whatever reaches FailJob.
var unsafeText = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://\S+`),                                                                       // URLs (may carry credentials)
	regexp.MustCompile(`(?i)\b(AKIA|ASIA)[A-Z0-9]{12,}`),                                                                      // AWS access key IDs
	regexp.MustCompile(`(?i)\b(password|passwd|secret|token|api[_-]?key|authorization|credential|session)s?\b\s*[:=]?\s*\S*`), // key=value secrets
	regexp.MustCompile(`(?i)\bbearer\s+\S+`),                                                                                  // bearer tokens
	regexp.MustCompile(`[A-Za-z0-9+/=_-]{20,}`),                                                                               // long opaque strings: keys, lease IDs, JWTs
	regexp.MustCompile(`(?:[A-Za-z]:)?(?:[\\/][\w.@~-]+){2,}[\\/]?(?::\d+)*`),                                                 // file paths, with :line
	regexp.MustCompile(`\b[\w.-]+\.go:\d+\b`),                                                                                 // Go source positions
	regexp.MustCompile(`\b0x[0-9a-fA-F]+\b`),                                                                                  // addresses
}

var stackMarkers = []string{"goroutine ", "panic:", "runtime.", "traceback", "\tat ", "stack"}

// SanitizeSummary turns any failure text into a safe user-facing summary.
//
// Invariant: the result is at most MaxSummary bytes of printable text on one
// line and holds no stack trace, file path, URL, lease or job ID, or anything
// shaped like a credential. Only the first line of the input is kept, because
// stack traces start on the second.
func SanitizeSummary(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	lower := strings.ToLower(s)
	for _, marker := range stackMarkers {
		if i := strings.Index(lower, marker); i >= 0 {
			s, lower = s[:i], lower[:i]
		}
	}
	for _, re := range unsafeText {
		s = re.ReplaceAllString(s, "[redacted]")
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > MaxSummary {
		s = truncateUTF8(s, MaxSummary-3) + "..."
	}
	if strings.Trim(strings.ReplaceAll(s, "[redacted]", ""), " .,:;-") == "" {
		return GenericFailureSummary
	}
	return s
}

func truncateUTF8(s string, n int) string {
	for n > 0 && n < len(s) && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

package domain

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxSummary bounds a failure summary: one short user-facing sentence.
const MaxSummary = 200

// GenericFailureSummary replaces a summary that sanitizing leaves empty.
const GenericFailureSummary = "Tracing failed because of an internal error."

// Patterns of text that must never reach a user-facing summary or the audit
// table. The worker already maps errors to safe messages; this is the second
// line of defence for whatever reaches FailJob.
//
// Order matters: a scheme-and-credential pattern runs before the key=value
// pattern, which would otherwise consume only the scheme ("Bearer") and leave
// the credential for the length-based pattern to redact in part.
var unsafeText = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://\S+`),                                                             // URLs (may carry credentials)
	regexp.MustCompile(`(?i)\b(AKIA|ASIA)[A-Z0-9]{12,}`),                                                            // AWS access key IDs
	regexp.MustCompile(`(?i)authorization\s*[:=]?\s*(?:(?:bearer|basic|digest|negotiate|aws4-hmac-sha256)\s+)?\S*`), // Authorization headers, scheme and credential
	regexp.MustCompile(`(?i)\bbearer\s+\S+`),                                                                        // bearer tokens
	// key=value secrets. No \b before the keyword, so that DB_PASSWORD=x
	// matches; _suffixes after it, so that SECRET_KEY=x matches.
	regexp.MustCompile(`(?i)(password|passwd|secret|token|api[_-]?key|credential|session)s?(?:_\w*)?\b\s*[:=]?\s*\S*`),
	regexp.MustCompile(`[A-Za-z0-9+/=_-]{20,}`),                               // long opaque strings: keys, lease IDs, JWTs
	regexp.MustCompile(`(?:[A-Za-z]:)?(?:[\\/][\w.@~-]+){2,}[\\/]?(?::\d+)*`), // file paths, with :line
	regexp.MustCompile(`\b[\w.-]+\.go:\d+\b`),                                 // Go source positions
	regexp.MustCompile(`\b0x[0-9a-fA-F]+\b`),                                  // addresses
}

// stackMarker finds where a stack trace starts within a line. It is a
// case-insensitive regexp on the text itself rather than strings.Index on
// strings.ToLower(text): lower-casing changes byte lengths (invalid UTF-8
// becomes U+FFFD, "İ" grows, the Kelvin sign shrinks), so an index into the
// lower-cased copy cut the original at the wrong place or panicked.
var stackMarker = regexp.MustCompile(`(?i)goroutine |panic:|runtime\.|traceback|stack`)

// javaFrame is the start of a Java stack frame ("\tat com.x.Y(Y.java:1)"). It
// is looked for before tabs become spaces, since " at " is ordinary English.
const javaFrame = "\tat "

const redacted = "[redacted]"

// maxSanitizePasses bounds SanitizeSummary's search for a fixed point; in
// practice the second pass already changes nothing.
const maxSanitizePasses = 8

// SanitizeSummary turns any failure text into a safe user-facing summary.
//
// Invariant: the result is at most MaxSummary bytes of printable text on one
// line and holds no stack trace, file path, URL, lease or job ID, or anything
// shaped like a credential. Only the first line of the input is kept, because
// stack traces start on the second. Sanitizing is idempotent:
// SanitizeSummary(SanitizeSummary(x)) == SanitizeSummary(x), so the summary
// stored on the movie, the one in the audit table and a re-sanitized copy
// agree.
func SanitizeSummary(s string) string {
	// One pass is not idempotent on its own: cutting to MaxSummary can turn
	// the tail into a new match ("x.go:12a" becomes "x.go:12..."). So passes
	// repeat until nothing changes; the result is then a fixed point by
	// construction.
	for range maxSanitizePasses {
		next := sanitizeOnce(s)
		if next == s {
			return s
		}
		s = next
	}
	return GenericFailureSummary
}

func sanitizeOnce(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, javaFrame); i >= 0 {
		s = s[:i]
	}
	// Every rune that is not printable (controls, tabs, format characters,
	// line separators, invalid UTF-8) becomes a space before any pattern is
	// matched. Dropping them after redaction, as this used to, glued words
	// into new secrets ("pass\x00word=x" became "password=x") and made the
	// result change when sanitized again.
	s = strings.Map(func(r rune) rune {
		if r != utf8.RuneError && unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, s)
	if loc := stackMarker.FindStringIndex(s); loc != nil {
		s = s[:loc[0]]
	}
	for _, re := range unsafeText {
		s = re.ReplaceAllString(s, redacted)
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > MaxSummary {
		s = truncateUTF8(s, MaxSummary-3) + "..."
	}
	if strings.Trim(strings.ReplaceAll(s, redacted, ""), " .,:;-") == "" {
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

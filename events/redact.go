package events

import "strings"

// Redacted replaces a secret value in a logged record.
const Redacted = "[redacted]"

// MinRedactedRun is the shortest run of hex digits RedactIDs removes: the
// length of a lease or job ID (domain.ValidLeaseID, 32 hex digits).
const MinRedactedRun = 32

// RedactIDs is the project's one redaction of IDs in free text bound for a
// log line, a poison message or an error (an error message about a
// malformed row may quote a value): every run of MinRedactedRun or more hex
// digits, in either case, becomes Redacted as a whole. A whole run and not
// each 32 digits of it: an ID glued to other hex digits ("abc" + id) would
// otherwise leave a part of it visible.
func RedactIDs(s string) string {
	var b strings.Builder
	run := 0
	flush := func(end int) {
		if run >= MinRedactedRun {
			b.WriteString(Redacted)
		} else {
			b.WriteString(s[end-run : end])
		}
		run = 0
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') {
			run++
			continue
		}
		flush(i)
		b.WriteByte(s[i])
	}
	flush(len(s))
	return b.String()
}

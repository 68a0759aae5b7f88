package events

import "time"

// TimeLayout is the one text form of a time in everything the project
// writes (API responses, audit items): RFC 3339 in UTC with exactly three
// fractional digits, e.g. 2026-12-02T12:03:00.000Z. Fixed width, so the
// strings sort in time order. (Times inside a movie row are Unix
// milliseconds: Millis.)
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime formats t in TimeLayout, in UTC.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

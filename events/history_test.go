package events

import (
	"testing"
	"time"
)

func TestCursorRoundTrip(t *testing.T) {
	e := Event{Type: TracingStarted, MovieID: "m", JobID: job1, At: time.Date(2026, 12, 2, 12, 0, 0, 5e6, time.UTC)}
	p := NewHistoryPosition(FormatTime(e.At), e.AuditKey())
	got, err := ParseCursor(p.Cursor())
	if err != nil || got != p {
		t.Fatalf("round trip of %+v: %+v, %v", p, got, err)
	}
	if c := p.Cursor(); len(c) > MaxCursorLength {
		t.Fatalf("cursor %q longer than %d", c, MaxCursorLength)
	}
}

func FuzzParseCursor(f *testing.F) {
	f.Add("MjAyNi0xMi0wMlQxMjowMDowMC4wMDVafjAxMjM0NTY3ODlhYmNkZWY")
	f.Add("")
	f.Add("not base64!")
	f.Add("MjAyNi0xMi0wMlQxMjowMDowMC4wMDVa")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseCursor(s)
		if err != nil {
			return
		}
		// Whatever parses is a position whose cursor parses to itself.
		if q, err := ParseCursor(p.Cursor()); err != nil || q != p {
			t.Fatalf("%q parsed to %+v, whose cursor parses to %+v, %v", s, p, q, err)
		}
	})
}

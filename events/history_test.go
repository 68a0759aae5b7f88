package events

import (
	"slices"
	"strings"
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
	if got, err := ParseIndexKey(p.IndexKey()); err != nil || got != p {
		t.Fatalf("index key round trip of %+v: %+v, %v", p, got, err)
	}
	for _, bad := range []string{"", "#", p.Cursor(), p.OccurredAt + "~" + p.KeyDigest, p.OccurredAt + "#" + p.KeyDigest + "0",
		"2026-12-02T12:00:00Z#" + p.KeyDigest, p.OccurredAt + "#" + strings.ToUpper(p.KeyDigest),
		// The same instant in another zone: keys sort as strings, so only
		// the one UTC form is a key.
		"2026-12-02T13:00:00.005+01:00#" + p.KeyDigest} {
		if _, err := ParseIndexKey(bad); err == nil {
			t.Errorf("ParseIndexKey(%q) accepted", bad)
		}
	}
}

// TestIndexKeyOrder: the index key sorts as the history reads, oldest to
// newest by time, whatever the digests; items of one instant by digest.
func TestIndexKeyOrder(t *testing.T) {
	at := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	var keys []string
	for i := range 50 {
		e := Event{Type: TracingStarted, MovieID: "m", JobID: strings.Repeat(string(rune('a'+i%26)), 32), At: at.Add(time.Duration(i) * 999 * time.Millisecond)}
		keys = append(keys, NewHistoryPosition(FormatTime(e.At), e.AuditKey()).IndexKey())
	}
	if !slices.IsSorted(keys) {
		t.Fatalf("index keys are not in time order: %q", keys)
	}
}

func FuzzParseIndexKey(f *testing.F) {
	f.Add("2026-12-02T12:00:00.005Z#0123456789abcdef")
	f.Add("")
	f.Add("2026-12-02T12:00:00.005Z~0123456789abcdef")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseIndexKey(s)
		if err != nil {
			return
		}
		if p.IndexKey() != s {
			t.Fatalf("%q parsed to %+v, whose index key is %q", s, p, p.IndexKey())
		}
		if q, err := ParseCursor(p.Cursor()); err != nil || q != p {
			t.Fatalf("%q: cursor of %+v parses to %+v, %v", s, p, q, err)
		}
	})
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

package domain_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/movietrace/tracinglocks/domain"
)

// TestValidateMarkersLabels: the label rules live in the domain, so every
// way in (the HTTP edge, a test, a future command) gets them: printable
// UTF-8 only, at most MaxMarkerLabel bytes.
func TestValidateMarkersLabels(t *testing.T) {
	mk := func(label string) []domain.Marker { return []domain.Marker{{ID: "m1", Label: label, X: 0.5, Y: 0.5}} }
	for _, ok := range []string{"", "Head", "tête de la larve", "頭", "left wing (tip)", "�", strings.Repeat("x", domain.MaxMarkerLabel)} {
		if err := domain.ValidateMarkers(mk(ok)); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"a\x00b", "tab\there", "new\nline", "\x1b[31mred", "evil\u202eexe.txt", "zero\u200bwidth",
		"\xff\xfe", "a\xc3", strings.Repeat("x", domain.MaxMarkerLabel+1)} {
		err := domain.ValidateMarkers(mk(bad))
		if e, ok := domain.AsError(err); !ok || e.Code != domain.CodeInvalid || e.Field != "markers.label" {
			t.Errorf("%q: %v, want invalid_input on markers.label", bad, err)
		}
	}
}

// FuzzValidateMarkersLabel: an accepted label is printable UTF-8 within the
// size limit, whatever the input.
func FuzzValidateMarkersLabel(f *testing.F) {
	for _, s := range []string{"Head", "a\x00b", "\u202e", "\xff", "頭"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, label string) {
		if domain.ValidateMarkers([]domain.Marker{{ID: "m1", Label: label, X: 0, Y: 1}}) != nil {
			return
		}
		if len(label) > domain.MaxMarkerLabel || !utf8.ValidString(label) || strings.IndexFunc(label, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			t.Fatalf("accepted %q", label)
		}
	})
}

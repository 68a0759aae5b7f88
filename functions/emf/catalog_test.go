package emf_test

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/emf"
)

// TestCatalogIsClosedAndLowCardinality: every series is declared once, its
// dimensions sorted, and every dimension value is a short lower-case word
// (no ID can be one).
func TestCatalogIsClosedAndLowCardinality(t *testing.T) {
	word := regexp.MustCompile(`^[a-z][a-z_]{1,31}$`)
	seen := map[string]bool{}
	for _, s := range emf.Catalog() {
		if seen[s.Key()] {
			t.Errorf("%s declared twice", s.Key())
		}
		seen[s.Key()] = true
		if s.Emitter == "" || s.Unit == "" {
			t.Errorf("%s: emitter %q unit %q", s.Key(), s.Emitter, s.Unit)
		}
		if !sort.SliceIsSorted(s.Dimensions, func(i, j int) bool { return s.Dimensions[i].Name < s.Dimensions[j].Name }) {
			t.Errorf("%s: dimensions not sorted", s.Key())
		}
		for _, d := range s.Dimensions {
			if !word.MatchString(d.Value) {
				t.Errorf("%s: dimension value %q is not a short word", s.Key(), d.Value)
			}
		}
		if got, ok := emf.Declared(s.Name, s.DimensionsMap()); !ok || got.Key() != s.Key() {
			t.Errorf("Declared(%s) = %v, %v", s.Key(), got.Key(), ok)
		}
	}
	if len(seen) < 20 {
		t.Errorf("only %d series", len(seen))
	}
}

// TestEmitRefusesUndeclaredSeries: a name, dimension value or unit outside
// the catalogue is refused and nothing is written.
func TestEmitRefusesUndeclaredSeries(t *testing.T) {
	var buf bytes.Buffer
	w := emf.New(&buf, nil)
	for name, err := range map[string]error{
		"unknown name":       w.Count("Whatever", 1),
		"ID as a dimension":  w.Emit(map[string]string{emf.DimensionReason: "0b3c7a1e-9f1d-4c55-8a51-0d3b7e0f5c11"}, emf.Metric{Name: emf.ClaimRefusals, Value: 1, Unit: emf.Count}),
		"missing dimension":  w.Count(emf.ClaimRefusals, 1),
		"extra dimension":    w.Emit(map[string]string{"MovieId": "m1"}, emf.Metric{Name: emf.TracesStarted, Value: 1, Unit: emf.Count}),
		"wrong unit":         w.Emit(nil, emf.Metric{Name: emf.FramesPerSecond, Value: 1, Unit: emf.Count}),
		"conflict elsewhere": w.Emit(map[string]string{emf.DimensionFunction: "worker", emf.DimensionReason: "lease_held"}, emf.Metric{Name: emf.LeaseConflicts, Value: 1, Unit: emf.Count}),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if buf.Len() != 0 {
		t.Errorf("wrote %q", buf.String())
	}
}

// TestParseReadsWhatEmitWrites: every series of the catalogue, written by
// Emit, parses back with its dimensions and value.
func TestParseReadsWhatEmitWrites(t *testing.T) {
	var buf bytes.Buffer
	w := emf.New(&buf, func() time.Time { return time.Unix(1, 0) })
	for i, s := range emf.Catalog() {
		if err := w.Emit(s.DimensionsMap(), emf.Metric{Name: s.Name, Value: float64(i + 1), Unit: s.Unit}); err != nil {
			t.Fatalf("%s: %v", s.Key(), err)
		}
	}
	points, err := emf.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	sums := emf.Sums(points)
	for i, s := range emf.Catalog() {
		if sums[s.Key()] != float64(i+1) {
			t.Errorf("%s = %v, want %d", s.Key(), sums[s.Key()], i+1)
		}
	}
	for _, bad := range []string{"not json", `{"a":1}`, `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"X","Dimensions":[[]],"Metrics":[{"Name":"a"}]}]},"a":1}`} {
		if _, err := emf.Parse(strings.NewReader(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

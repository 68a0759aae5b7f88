package emf

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Point is one metric value of a parsed EMF record.
type Point struct {
	Name       string
	Dimensions map[string]string
	Unit       Unit
	Value      float64
	// Members are every top-level member of the record other than _aws.
	Members map[string]any
}

// Key is the point's series key (Series.Key).
func (p Point) Key() string { return KeyOf(p.Name, p.Dimensions) }

// Parse reads EMF records, one JSON object per line, as CloudWatch would:
// every metric of every directive, with its dimension values read from the
// record's members. A line that is not an EMF record is an error (Lambda
// functions also log JSON lines: callers give Parse only metric output).
func Parse(r io.Reader) ([]Point, error) {
	var out []Point
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			return nil, fmt.Errorf("emf line %d: %w", n, err)
		}
		var meta struct {
			AWS struct {
				Timestamp         *int64
				CloudWatchMetrics []directive
			} `json:"_aws"`
		}
		if err := json.Unmarshal([]byte(line), &meta); err != nil || meta.AWS.Timestamp == nil || len(meta.AWS.CloudWatchMetrics) == 0 {
			return nil, fmt.Errorf("emf line %d: no _aws metadata: %s", n, line)
		}
		delete(rec, "_aws")
		for _, d := range meta.AWS.CloudWatchMetrics {
			if d.Namespace != Namespace {
				return nil, fmt.Errorf("emf line %d: namespace %q", n, d.Namespace)
			}
			dims := map[string]string{}
			for _, set := range d.Dimensions {
				for _, k := range set {
					v, ok := rec[k].(string)
					if !ok {
						return nil, fmt.Errorf("emf line %d: dimension %s has no string value", n, k)
					}
					dims[k] = v
				}
			}
			for _, m := range d.Metrics {
				v, ok := rec[m.Name].(float64)
				if !ok {
					return nil, fmt.Errorf("emf line %d: metric %s has no number", n, m.Name)
				}
				out = append(out, Point{Name: m.Name, Dimensions: dims, Unit: m.Unit, Value: v, Members: rec})
			}
		}
	}
	return out, sc.Err()
}

// Sums adds up the points' values per series key.
func Sums(points []Point) map[string]float64 {
	m := map[string]float64{}
	for _, p := range points {
		m[p.Key()] += p.Value
	}
	return m
}

// Coverage compares points written by emitter with the catalogue: missing
// are the emitter's series that no point gave a non-zero value, foreign the
// points of series that are not the emitter's (or not declared at all).
// Each emitter's tests require both empty for the points of a scenario that
// exercises every series, so that no dashboard panel is empty by design.
func Coverage(emitter Emitter, points []Point) (missing, foreign []string) {
	sums := Sums(points)
	for _, s := range Catalog() {
		if s.Emitter == emitter && sums[s.Key()] == 0 {
			missing = append(missing, s.Key())
		}
	}
	for _, p := range points {
		if s, ok := Declared(p.Name, p.Dimensions); !ok || s.Emitter != emitter {
			foreign = append(foreign, p.Key())
		}
	}
	return missing, foreign
}

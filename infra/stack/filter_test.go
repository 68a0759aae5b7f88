package stack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/schema"
)

// matchPattern evaluates a Lambda event filter pattern against an event, for
// the subset of the pattern syntax the stack uses: nested objects, and
// arrays of literal values (any one must equal the event's value). Any other
// operator fails the test, so a later change to the filters has to extend
// this matcher rather than go unchecked.
func matchPattern(t *testing.T, pattern map[string]any, event any) bool {
	t.Helper()
	ev, ok := event.(map[string]any)
	if !ok {
		return false
	}
	for k, p := range pattern {
		v, present := ev[k]
		switch p := p.(type) {
		case map[string]any:
			if !present || !matchPattern(t, p, v) {
				return false
			}
		case []any:
			if !present {
				return false
			}
			hit := false
			for _, want := range p {
				switch want.(type) {
				case string, float64, bool, nil:
					if want == v {
						hit = true
					}
				default:
					t.Fatalf("filter operator %v: not supported by this test's matcher", want)
				}
			}
			if !hit {
				return false
			}
		default:
			t.Fatalf("filter pattern value %v (%T): not valid Lambda filter syntax", p, p)
		}
	}
	return true
}

// streamPatterns returns the stream event source's filter patterns as the
// synthesized template has them.
func streamPatterns(t *testing.T) []map[string]any {
	fx := synth(t)
	st := fx.stacks[devStack]
	var out []map[string]any
	for _, r := range resources(fx.json[devStack], "AWS::Lambda::EventSourceMapping") {
		p := props(r)
		if fn, _ := p["FunctionName"].(map[string]any); fn["Ref"] != logicalID(st, st.Functions[StreamProcessor]) {
			continue
		}
		for _, f := range p["FilterCriteria"].(map[string]any)["Filters"].([]any) {
			var pat map[string]any
			if err := json.Unmarshal([]byte(f.(map[string]any)["Pattern"].(string)), &pat); err != nil {
				t.Fatal(err)
			}
			out = append(out, pat)
		}
	}
	if len(out) == 0 {
		t.Fatal("the stream event source has no filters")
	}
	return out
}

func delivered(t *testing.T, patterns []map[string]any, record any) bool {
	for _, p := range patterns {
		if matchPattern(t, p, record) {
			return true
		}
	}
	return false
}

// TestStreamFilterLosesNothing runs the synthesized filters over the stream
// records recorded from DynamoDB Local (testdata/streams, a scripted trace
// lifecycle with failures and stale takeovers): every record from which
// events.Derive derives an event must be delivered.
func TestStreamFilterLosesNothing(t *testing.T) {
	patterns := streamPatterns(t)
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "testdata", "streams", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no stream fixtures (%v)", err)
	}
	total, kept, needed := 0, 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var raw struct{ Records []json.RawMessage }
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i, r := range raw.Records {
			var generic any
			var rec lambdaevents.DynamoDBEventRecord
			if err := json.Unmarshal(r, &generic); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(r, &rec); err != nil {
				t.Fatal(err)
			}
			c, err := schema.DecodeRecord(rec)
			if err != nil {
				t.Fatalf("%s record %d: %v", filepath.Base(f), i, err)
			}
			total++
			pass := delivered(t, patterns, generic)
			if pass {
				kept++
			}
			if evs := events.Derive(c.Old, c.New); len(evs) > 0 {
				needed++
				if !pass {
					t.Errorf("%s record %d (%s): filtered out, but derives %v", filepath.Base(f), i, rec.EventName, evs[0].Type)
				}
			}
		}
	}
	t.Logf("the filters deliver %d of %d recorded records (%d derive events)", kept, total, needed)
	if needed == 0 {
		t.Fatal("no fixture record derives an event: the fixtures changed shape")
	}
}

// TestStreamFilterDropsAnalysisTraffic checks the writes the filter exists
// to keep away from the function: analysis-lease traffic on movies that are
// not tracing, whatever their status.
func TestStreamFilterDropsAnalysisTraffic(t *testing.T) {
	patterns := streamPatterns(t)
	image := func(status, leaseKind string) map[string]any {
		img := map[string]any{"movieId": map[string]any{"S": "m1"}, "status": map[string]any{"S": status}}
		if leaseKind != "" {
			img["lease"] = map[string]any{"M": map[string]any{"kind": map[string]any{"S": leaseKind}}}
		}
		return img
	}
	record := func(name string, old, new map[string]any) map[string]any {
		d := map[string]any{"Keys": map[string]any{"movieId": map[string]any{"S": "m1"}}}
		if old != nil {
			d["OldImage"] = old
		}
		if new != nil {
			d["NewImage"] = new
		}
		return map[string]any{"eventName": name, "eventSource": "aws:dynamodb", "dynamodb": d}
	}
	for _, tc := range []struct {
		name string
		rec  map[string]any
		want bool
	}{
		{"heartbeat on a ready movie", record("MODIFY", image("ready", "analysis"), image("ready", "analysis")), false},
		{"heartbeat on a traced movie", record("MODIFY", image("traced", "analysis"), image("traced", "analysis")), false},
		{"heartbeat on a failed movie", record("MODIFY", image("tracing_failed", "analysis"), image("tracing_failed", "analysis")), false},
		{"open analysis", record("MODIFY", image("traced", ""), image("traced", "analysis")), false},
		{"release", record("MODIFY", image("ready", "analysis"), image("ready", "")), false},
		{"new ready movie", record("INSERT", nil, image("ready", "")), false},
		{"movie deleted while tracing", record("REMOVE", image("tracing", "tracing"), nil), false},
		{"trace started", record("MODIFY", image("ready", "analysis"), image("tracing", "tracing")), true},
		{"trace completed", record("MODIFY", image("tracing", "tracing"), image("traced", "")), true},
		{"trace failed", record("MODIFY", image("tracing", "tracing"), image("tracing_failed", "")), true},
		{"stale tracing lease taken over by Analyze", record("MODIFY", image("tracing", "tracing"), image("tracing", "analysis")), true},
		{"job heartbeat", record("MODIFY", image("tracing", "tracing"), image("tracing", "tracing")), true},
	} {
		if got := delivered(t, patterns, tc.rec); got != tc.want {
			t.Errorf("%s: delivered = %v, want %v", tc.name, got, tc.want)
		}
	}
}

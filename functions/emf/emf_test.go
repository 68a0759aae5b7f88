package emf_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/emf"
)

func TestEmitWritesOneEMFRecordPerLine(t *testing.T) {
	var buf bytes.Buffer
	at := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	w := emf.New(&buf, func() time.Time { return at })
	if err := w.Emit(map[string]string{emf.DimensionReason: "already_claimed"}, emf.Metric{Name: emf.ClaimRefusals, Value: 1, Unit: emf.Count}); err != nil {
		t.Fatal(err)
	}
	if err := w.Count(emf.TracesStarted, 3); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %q", len(lines), buf.String())
	}
	var rec struct {
		AWS struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
		Reason        string
		ClaimRefusals float64
	}
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	d := rec.AWS.CloudWatchMetrics
	if rec.AWS.Timestamp != at.UnixMilli() || len(d) != 1 || d[0].Namespace != emf.Namespace ||
		len(d[0].Dimensions) != 1 || len(d[0].Dimensions[0]) != 1 || d[0].Dimensions[0][0] != "Reason" ||
		len(d[0].Metrics) != 1 || d[0].Metrics[0].Name != emf.ClaimRefusals || d[0].Metrics[0].Unit != "Count" ||
		rec.Reason != "already_claimed" || rec.ClaimRefusals != 1 {
		t.Errorf("record %s", lines[0])
	}
	if !strings.Contains(lines[1], `"TracesStarted":3`) || !strings.Contains(lines[1], `"Dimensions":[[]]`) {
		t.Errorf("count record %s", lines[1])
	}
}

func TestEmitRefusesBadInput(t *testing.T) {
	w := emf.New(&bytes.Buffer{}, nil)
	for name, err := range map[string]error{
		"no metrics":            w.Emit(nil),
		"empty name":            w.Emit(nil, emf.Metric{Value: 1}),
		"_aws":                  w.Emit(nil, emf.Metric{Name: "_aws", Value: 1}),
		"metric named as a dim": w.Emit(map[string]string{"Reason": "x"}, emf.Metric{Name: "Reason", Value: 1}),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

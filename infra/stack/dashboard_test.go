package stack

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/functions/emf"
)

// dashboardBody joins a dashboard's DashboardBody (an Fn::Join of JSON text
// and CloudFormation tokens; each token stands inside a JSON string) and
// parses it.
func dashboardBody(tb testing.TB, r map[string]any) map[string]any {
	tb.Helper()
	var text strings.Builder
	switch body := props(r)["DashboardBody"].(type) {
	case string:
		text.WriteString(body)
	case map[string]any:
		join, _ := body["Fn::Join"].([]any)
		if len(join) != 2 {
			tb.Fatalf("DashboardBody %v", body)
		}
		for _, part := range join[1].([]any) {
			if s, ok := part.(string); ok {
				text.WriteString(s)
			} else {
				text.WriteString("TOKEN")
			}
		}
	default:
		tb.Fatalf("DashboardBody %T", body)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text.String()), &out); err != nil {
		tb.Fatalf("dashboard body: %v\n%s", err, text.String())
	}
	return out
}

// businessSeries returns the series keys (emf.KeyOf) of the business
// namespace that a dashboard's widgets reference, failing on any reference
// that cannot be checked (a math expression or SEARCH over the namespace).
func businessSeries(tb testing.TB, body map[string]any) map[string]string {
	tb.Helper()
	out := map[string]string{}
	widgets, _ := body["widgets"].([]any)
	for _, w := range widgets {
		p, _ := w.(map[string]any)["properties"].(map[string]any)
		title, _ := p["title"].(string)
		metrics, _ := p["metrics"].([]any)
		namespace := ""
		for _, m := range metrics {
			row := m.([]any)
			var fields []string
			for _, f := range row {
				switch v := f.(type) {
				case string:
					fields = append(fields, v)
				case map[string]any:
					if expr, ok := v["expression"].(string); ok && strings.Contains(expr, emf.Namespace) {
						tb.Errorf("widget %q: an expression over %s cannot be checked: %s", title, emf.Namespace, expr)
					}
				}
			}
			if len(fields) == 0 {
				continue
			}
			// CloudWatch's shorthand: "." repeats the previous row's field.
			if fields[0] == "." || fields[0] == "..." {
				tb.Fatalf("widget %q: shorthand metric row %v", title, row)
			}
			namespace = fields[0]
			if namespace != emf.Namespace {
				continue
			}
			if len(fields)%2 != 0 {
				tb.Fatalf("widget %q: metric row %v", title, row)
			}
			dims := map[string]string{}
			for i := 2; i < len(fields); i += 2 {
				dims[fields[i]] = fields[i+1]
			}
			out[emf.KeyOf(fields[1], dims)] = "dashboard widget " + fmt.Sprintf("%q", title)
		}
	}
	return out
}

// TestDashboardShowsOnlyEmittedSeries: every business metric the
// dashboard's widgets and the metric alarms reference, by name and exact
// dimensions (a CloudWatch metric's identity), is a series of emf.Catalog,
// which Emit enforces and whose every series each emitter's tests show
// written (emf.Coverage in the worker's, the stream processor's and the
// API's metrics tests). So no panel is empty by construction. And every
// catalogued series is on the dashboard.
func TestDashboardShowsOnlyEmittedSeries(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		dashboards := resources(fx.json[key], "AWS::CloudWatch::Dashboard")
		if len(dashboards) != 1 {
			t.Fatalf("%s: %d dashboards", key, len(dashboards))
		}
		refs := map[string]string{}
		for _, r := range dashboards {
			refs = businessSeries(t, dashboardBody(t, r))
		}
		for id, r := range resources(fx.json[key], "AWS::CloudWatch::Alarm") {
			p := props(r)
			if p["Namespace"] == emf.Namespace {
				dims := map[string]string{}
				ds, _ := p["Dimensions"].([]any)
				for _, d := range ds {
					d := d.(map[string]any)
					dims[d["Name"].(string)], _ = d["Value"].(string)
				}
				refs[emf.KeyOf(p["MetricName"].(string), dims)] = "alarm " + id
			}
			if ms, ok := p["Metrics"]; ok && strings.Contains(fmt.Sprint(ms), emf.Namespace) {
				t.Errorf("%s: alarm %s uses a metric math over %s: give it a single metric the test can check", key, id, emf.Namespace)
			}
		}
		if len(refs) == 0 {
			t.Fatalf("%s: no business metric referenced", key)
		}
		for k, where := range refs {
			if _, ok := declared(k); !ok {
				t.Errorf("%s: %s references %s, which no function writes (not in emf.Catalog)", key, where, k)
			}
		}
		for _, s := range emf.Catalog() {
			if _, ok := refs[s.Key()]; !ok {
				t.Errorf("%s: the dashboard does not show %s (written by the %s)", key, s.Key(), s.Emitter)
			}
		}
	}
}

func declared(key string) (emf.Series, bool) {
	for _, s := range emf.Catalog() {
		if s.Key() == key {
			return s, true
		}
	}
	return emf.Series{}, false
}

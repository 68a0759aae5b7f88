package stack

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestOperationsDocHasOneEntryPerAlarm: docs/operations.md has exactly one
// `### <id>` heading per alarm of every synthesized stack (the alarm's
// construct ID: its logical ID without CDK's hash), no heading for an
// alarm that does not exist, and each alarm's description links to its
// entry.
func TestOperationsDocHasOneEntryPerAlarm(t *testing.T) {
	fx := synth(t)
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	inAlarms := false
	headings := map[string]int{}
	for line := range strings.SplitSeq(string(doc), "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			inAlarms = line == "## Alarms"
		case inAlarms && strings.HasPrefix(line, "### "):
			headings[strings.TrimSpace(strings.TrimPrefix(line, "### "))]++
		}
	}
	hash := regexp.MustCompile(`^(.+?)[0-9A-F]{8}$`)
	alarms := map[string]bool{}
	for _, key := range allStacks() {
		for logical, r := range resources(fx.json[key], "AWS::CloudWatch::Alarm") {
			m := hash.FindStringSubmatch(logical)
			if m == nil {
				t.Errorf("%s: alarm logical ID %s has no CDK hash suffix", key, logical)
				continue
			}
			id := m[1]
			alarms[id] = true
			if desc, _ := props(r)["AlarmDescription"].(string); !strings.HasSuffix(desc, "(docs/operations.md#"+id+")") {
				t.Errorf("%s: alarm %s's description does not link its entry: %q", key, id, desc)
			}
		}
	}
	if len(alarms) == 0 {
		t.Fatal("no alarms in the templates")
	}
	for id := range alarms {
		if headings[id] != 1 {
			t.Errorf("docs/operations.md: %d entries (### %s) for alarm %s, want 1", headings[id], id, id)
		}
	}
	for h := range headings {
		if !alarms[h] {
			t.Errorf("docs/operations.md: entry ### %s names no alarm of the stacks", h)
		}
	}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range alarms {
			if !yield(id) {
				return
			}
		}
	})
	t.Logf("%d alarms per stack: %s", len(ids), strings.Join(ids, " "))
}

// TestCostFiguresMatchTheTemplate: docs/deploy.md's cost at rest counts the
// alarms, their billed metrics (a metric math alarm is billed per metric it
// reads), the dashboard's metrics and the SQS event sources (each polls its
// queue while idle) of the synthesized stacks.
func TestCostFiguresMatchTheTemplate(t *testing.T) {
	fx := synth(t)
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range allStacks() {
		alarms, metrics := 0, 0
		for _, r := range resources(fx.json[key], "AWS::CloudWatch::Alarm") {
			alarms++
			ms, ok := props(r)["Metrics"].([]any)
			if !ok {
				metrics++
				continue
			}
			for _, m := range ms {
				if _, stat := m.(map[string]any)["MetricStat"]; stat {
					metrics++
				}
			}
		}
		rows := 0
		for _, r := range resources(fx.json[key], "AWS::CloudWatch::Dashboard") {
			for _, w := range dashboardBody(t, r)["widgets"].([]any) {
				p, _ := w.(map[string]any)["properties"].(map[string]any)
				for _, m := range p["metrics"].([]any) {
					if row := m.([]any); len(row) > 0 {
						if _, expr := row[0].(map[string]any); !expr {
							rows++
						}
					}
				}
			}
		}
		sqsSources := 0
		for _, r := range resources(fx.json[key], "AWS::Lambda::EventSourceMapping") {
			if strings.Contains(fmt.Sprint(props(r)["EventSourceArn"]), "Queue") {
				sqsSources++
			}
		}
		want := []string{fmt.Sprintf("%d alarms (%d alarm metrics)", alarms, metrics), fmt.Sprintf("dashboard of %d metrics", rows),
			fmt.Sprintf("%d SQS event sources", sqsSources)}
		t.Logf("%s: %s", key, strings.Join(want, ", "))
		for _, w := range want {
			if !strings.Contains(string(doc), w) {
				t.Errorf("%s: docs/deploy.md does not say %q", key, w)
			}
		}
	}
}

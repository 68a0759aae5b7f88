package schema

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
)

func TestAuditItem(t *testing.T) {
	e := events.Event{Type: events.TracingStarted, MovieID: "movie-1", JobID: job1, UserID: alice.ID, UserName: alice.Name,
		At: time.Date(2026, 12, 2, 13, 4, 5, 6_000_000, time.FixedZone("x", 3600)), FromFrame: 7, Version: 9,
		Summary: "ignored for a start"}
	it := NewAuditItem(e)
	want := AuditItem{MovieID: "movie-1", EventKey: job1 + "#movie.tracing.started", Type: "movie.tracing.started",
		JobID: job1, UserID: alice.ID, UserName: alice.Name, OccurredAt: "2026-12-02T12:04:05.006Z", FromFrame: 7, Version: 9}
	want.HistoryKey = "2026-12-02T12:04:05.006Z#" + want.Position().KeyDigest
	if it != want {
		t.Fatalf("got  %+v\nwant %+v", it, want)
	}
	item, err := MarshalAuditItem(e)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := item["summary"]; ok {
		t.Error("a start carries a summary")
	}
	back, err := UnmarshalAuditItem(item)
	if err != nil || back != want {
		t.Fatalf("round trip %+v %v", back, err)
	}
	if at, err := back.Time(); err != nil || !at.Equal(e.At.Truncate(time.Millisecond)) {
		t.Errorf("time %v %v", at, err)
	}
	// Fixed width: lexical order is time order.
	a := NewAuditItem(events.Event{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}).OccurredAt
	b := NewAuditItem(events.Event{At: time.Date(2026, 1, 1, 0, 0, 0, 100_000_000, time.UTC)}).OccurredAt
	if len(a) != len(b) || a >= b {
		t.Errorf("%s !< %s", a, b)
	}
}

// secretish is what must never appear in an audit item.
var secretish = []*regexp.Regexp{
	regexp.MustCompile(`goroutine|panic|runtime\.|\.go:\d`), // stack traces
	regexp.MustCompile(`(?:[\\/][\w.-]+){2,}`),              // file paths
	regexp.MustCompile(`(?i)AKIA|ASIA[A-Z0-9]{8}|secret|password|bearer|token=|://`),
	regexp.MustCompile(`[0-9a-f]{32}`), // lease IDs (a job ID only in jobId/eventKey)
}

// HostileSummaries are failure texts a careless worker might pass on.
var hostileSummaries = []string{
	hostile,
	"panic: runtime error: invalid memory address\n\ngoroutine 7 [running]:\nmain.trace(...)\n\t/var/task/main.go:88 +0x1d",
	"Traceback (most recent call last):\n  File \"/opt/app/worker.py\", line 3",
	"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY and ASIAIOSFODNN7EXAMPLE",
	"lease " + lease1 + " lost at C:\\Users\\ci\\work\\trace.go:12",
	"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc",
	"token=abc123 session: xyz api_key=k",
	strings.Repeat("x", 5000),
	"bad \x00\x1b[31m control \u202e chars",
}

func TestAuditItemSanitizesHostileSummaries(t *testing.T) {
	for _, s := range hostileSummaries {
		for _, typ := range []events.EventType{events.TracingFailed, events.TracingAbandoned} {
			it := NewAuditItem(events.Event{Type: typ, MovieID: "movie-1", JobID: job1, Summary: s})
			if it.Summary == "" || len(it.Summary) > domain.MaxSummary {
				t.Errorf("summary %q of %q", it.Summary, s)
			}
			checkAuditItemSafe(t, it)
		}
	}
	if it := NewAuditItem(events.Event{Type: events.TracingCompleted, JobID: job1, Summary: hostile}); it.Summary != "" {
		t.Errorf("completed carries summary %q", it.Summary)
	}
}

// checkAuditItemSafe fails if any field but the job ID fields looks unsafe.
func checkAuditItemSafe(t *testing.T, it AuditItem) {
	t.Helper()
	v := reflect.ValueOf(it)
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if name == "JobID" || name == "EventKey" {
			continue
		}
		s, ok := v.Field(i).Interface().(string)
		if !ok {
			continue
		}
		for _, re := range secretish {
			if re.MatchString(s) {
				t.Errorf("%s %q matches %s", name, s, re)
			}
		}
		for _, r := range s {
			if r < 0x20 || r == 0x7f {
				t.Errorf("%s %q has a control character", name, s)
			}
		}
	}
}

package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	ms, err := Parse(strings.NewReader("# comment\nid: a\npkg: ./domain\nfile: domain/rule.go\nrun: TestX\nfrom: x <= y\nto: x < y\n\nid: b\npkg: ./events\nfile: events/e.go\nfrom: a\\n\\tb\nto:\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].ID != "a" || ms[0].From != "x <= y" || ms[0].To != "x < y" || ms[0].Run != "TestX" || ms[1].From != "a\n\tb" || ms[1].To != "" {
		t.Fatalf("parsed %+v", ms)
	}
	for _, bad := range []string{
		"id: a\npkg: p\nfile: f\n",                                             // no from
		"id: a\npkg: p\nfile: f\nfrom: x\nto: x\n",                             // no change
		"id: a\npkg: p\nfile: f\nfrom: x\n\nid: a\npkg: p\nfile: f\nfrom: y\n", // twice
		"id a\n",        // not key: value
		"colour: red\n", // unknown key
	} {
		if _, err := Parse(strings.NewReader(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestApplyNeedsExactlyOneOccurrence(t *testing.T) {
	m := Mutant{File: "f.go", From: "<=", To: "<"}
	if got, err := Apply([]byte("a <= b"), m); err != nil || string(got) != "a < b" {
		t.Fatalf("Apply: %q, %v", got, err)
	}
	for _, src := range []string{"a < b", "a <= b <= c"} {
		if _, err := Apply([]byte(src), m); err == nil {
			t.Errorf("Apply(%q) succeeded", src)
		}
	}
}

func TestReportFailsBelowTheRate(t *testing.T) {
	var b bytes.Buffer
	res := map[string]map[Verdict][]string{
		"./domain": {Killed: {"a", "b"}, Survived: {"c"}},
		"./events": {Killed: {"d"}, Invalid: {"e"}},
	}
	if Report(&b, res, 0.95) {
		t.Fatalf("2 of 3 passed the 95%% bar:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "survived: c") || !strings.Contains(b.String(), "invalid: e") {
		t.Fatalf("report:\n%s", b.String())
	}
	b.Reset()
	if !Report(&b, map[string]map[Verdict][]string{"./events": {Killed: {"d"}}}, 0.95) {
		t.Fatalf("1 of 1 failed:\n%s", b.String())
	}
}

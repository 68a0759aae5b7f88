package testenv

import (
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// fakeTB records a Fatal and ends the goroutine like testing.T does.
type fakeTB struct {
	testing.TB
	name  string
	fatal string
}

func (f *fakeTB) Helper()      {}
func (f *fakeTB) Name() string { return f.name }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fatalOf runs fn with a fakeTB and returns what it passed to Fatalf.
func fatalOf(fn func(tb testing.TB)) string {
	tb := &fakeTB{name: "TestFake"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(tb)
	}()
	<-done
	return tb.fatal
}

func TestClientsFailLoudlyWithoutEndpoints(t *testing.T) {
	for name, tc := range map[string]struct {
		env    string
		client func(testing.TB)
	}{
		"DynamoDB": {"DYNAMODB_ENDPOINT", func(tb testing.TB) { DynamoDB(tb) }},
		"Streams":  {"DYNAMODB_ENDPOINT", func(tb testing.TB) { Streams(tb) }},
		"SQS":      {"SQS_ENDPOINT", func(tb testing.TB) { SQS(tb) }},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(tc.env, "")
			if got, want := fatalOf(tc.client), tc.env+" not set: run the tests with `make test`"; got != want {
				t.Errorf("fatal = %q, want %q", got, want)
			}
			for _, garbage := range []string{"127.0.0.1:8000", "ftp://x", "http://", "%zz"} {
				t.Setenv(tc.env, garbage)
				if got := fatalOf(tc.client); !strings.Contains(got, "is not an http(s) URL") {
					t.Errorf("%s=%q: fatal = %q, want a complaint about the URL", tc.env, garbage, got)
				}
			}
			t.Setenv(tc.env, "http://127.0.0.1:1")
			if got := fatalOf(tc.client); got != "" {
				t.Errorf("with a valid endpoint: fatal %q", got)
			}
		})
	}
}

func TestUniqueName(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{3,80}$`)
	seen := map[string]bool{}
	for _, prefix := range []string{"movies", "", "weird prefix/with:chars", strings.Repeat("p", 200), "---"} {
		for range 20 {
			n := UniqueName(t, prefix)
			if !valid.MatchString(n) {
				t.Errorf("UniqueName(%q) = %q: not a valid queue/table name", prefix, n)
			}
			if seen[n] {
				t.Errorf("UniqueName(%q) repeated %q", prefix, n)
			}
			seen[n] = true
		}
	}
	if n := UniqueName(t, "movies"); !strings.HasPrefix(n, "movies-TestUniqueName-") {
		t.Errorf("UniqueName = %q, want it to start with the prefix and test name", n)
	}
	t.Run("sub/test with spaces", func(t *testing.T) {
		if n := UniqueName(t, "q"); !strings.HasPrefix(n, "q-TestUniqueName-sub-test_with_spaces-") {
			t.Errorf("UniqueName in a subtest = %q", n)
		}
	})
}

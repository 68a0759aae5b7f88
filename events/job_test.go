package events

import (
	"strings"
	"testing"
)

const validJob = `{"movieId":"m1","jobId":"0123456789abcdef0123456789abcdef","fromFrame":3,"version":7}`

func TestDecodeTraceJobRoundTrip(t *testing.T) {
	j, err := DecodeTraceJob(validJob)
	if err != nil {
		t.Fatal(err)
	}
	body, err := EncodeTraceJob(j)
	if err != nil || body != validJob {
		t.Fatalf("re-encoded %q, %v", body, err)
	}
}

// continuationJob is a worker's continuation message: segment 2.
const continuationJob = `{"movieId":"m1","jobId":"0123456789abcdef0123456789abcdef","fromFrame":3,"version":9,"segment":2}`

// TestDecodeContinuation: the segment round-trips, and segment 0 is
// omitted, so a first message is byte for byte what it was before segments.
func TestDecodeContinuation(t *testing.T) {
	j, err := DecodeTraceJob(continuationJob)
	if err != nil || j.Segment != 2 {
		t.Fatalf("%+v %v", j, err)
	}
	if body, _ := EncodeTraceJob(j); body != continuationJob {
		t.Fatalf("re-encoded %q", body)
	}
	j.Segment = 0
	if body, _ := EncodeTraceJob(j); strings.Contains(body, "segment") {
		t.Fatalf("segment 0 encoded: %q", body)
	}
}

func TestDecodeTraceJobRejectsGarbage(t *testing.T) {
	for name, body := range map[string]string{
		"empty":            "",
		"not json":         "hello",
		"array":            "[]",
		"unknown field":    `{"movieId":"m1","jobId":"0123456789abcdef0123456789abcdef","fromFrame":3,"version":7,"x":1}`,
		"wrong type":       `{"movieId":"m1","jobId":"0123456789abcdef0123456789abcdef","fromFrame":"3","version":7}`,
		"bad job id":       `{"movieId":"m1","jobId":"nope","fromFrame":3,"version":7}`,
		"bad movie id":     `{"movieId":"../etc","jobId":"0123456789abcdef0123456789abcdef","fromFrame":3,"version":7}`,
		"negative from":    `{"movieId":"m1","jobId":"0123456789abcdef0123456789abcdef","fromFrame":-1,"version":7}`,
		"no version":       `{"movieId":"m1","jobId":"0123456789abcdef0123456789abcdef","fromFrame":3}`,
		"trailing":         validJob + `{}`,
		"huge":             `{"movieId":"` + strings.Repeat("a", 5000) + `"}`,
		"negative segment": `{"movieId":"m1","jobId":"0123456789abcdef0123456789abcdef","fromFrame":3,"version":7,"segment":-1}`,
		"huge segment":     `{"movieId":"m1","jobId":"0123456789abcdef0123456789abcdef","fromFrame":3,"version":7,"segment":1048577}`,
		"float segment":    `{"movieId":"m1","jobId":"0123456789abcdef0123456789abcdef","fromFrame":3,"version":7,"segment":1.5}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeTraceJob(body); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func FuzzDecodeTraceJob(f *testing.F) {
	f.Add(validJob)
	f.Add(`{"movieId":"m1"}`)
	f.Add(`null`)
	f.Add(continuationJob)
	f.Fuzz(func(t *testing.T, body string) {
		j, err := DecodeTraceJob(body)
		if err != nil {
			return
		}
		again, err := EncodeTraceJob(j)
		if err != nil {
			t.Fatal(err)
		}
		if j2, err := DecodeTraceJob(again); err != nil || j2 != j {
			t.Fatalf("round trip changed %+v into %+v (%v)", j, j2, err)
		}
	})
}

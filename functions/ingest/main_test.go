package main

import (
	"strings"
	"testing"
)

func TestBuildNeedsTableAndBucket(t *testing.T) {
	for _, env := range []map[string]string{
		{"MOVIES_BUCKET": "b", "UPLOAD_QUEUE_URL": "q"},
		{"MOVIES_TABLE": "m", "UPLOAD_QUEUE_URL": "q"},
		{"MOVIES_TABLE": "m", "MOVIES_BUCKET": "b"},
	} {
		_, _, err := build(t.Context(), func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), "is not set") {
			t.Errorf("%v: %v", env, err)
		}
	}
	env := map[string]string{"MOVIES_TABLE": "m", "MOVIES_BUCKET": "b", "UPLOAD_QUEUE_URL": "q", "AWS_REGION": "us-east-1"}
	if h, _, err := build(t.Context(), func(k string) string { return env[k] }); err != nil || h == nil {
		t.Fatalf("build: %v", err)
	}
}

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// The development identity cannot be switched on inside Lambda: the init
// fails before any client or handler exists.
func TestBuildRefusesDevAuthInsideLambda(t *testing.T) {
	for _, lambdaVar := range []string{httpapi.EnvLambdaFunctionName, httpapi.EnvLambdaRuntimeAPI} {
		_, _, err := build(context.Background(), env(map[string]string{
			lambdaVar: "x", httpapi.EnvDevAuth: "1", "MOVIES_TABLE": "m", "FRAMES_TABLE": "f", "AUDIT_TABLE": "a", "MOVIES_BUCKET": "b",
		}))
		if err == nil || !strings.Contains(err.Error(), httpapi.EnvDevAuth) {
			t.Errorf("%s set, DEV_AUTH=1: got %v, want an init error naming DEV_AUTH", lambdaVar, err)
		}
	}
}

func TestBuildInLambdaWithoutDevAuth(t *testing.T) {
	h, _, err := build(context.Background(), env(map[string]string{
		httpapi.EnvLambdaFunctionName: "api", "AWS_REGION": "us-east-1", "MOVIES_TABLE": "m", "FRAMES_TABLE": "f", "AUDIT_TABLE": "a", "MOVIES_BUCKET": "b",
	}))
	if err != nil || h == nil {
		t.Fatalf("build: %v", err)
	}
}

func TestBuildNeedsTables(t *testing.T) {
	_, _, err := build(context.Background(), env(map[string]string{httpapi.EnvLambdaFunctionName: "api"}))
	if err == nil || !strings.Contains(err.Error(), "MOVIES_TABLE") {
		t.Fatalf("got %v, want a missing-table error", err)
	}
}

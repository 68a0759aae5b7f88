package main

import (
	"testing"

	"github.com/movietrace/tracinglocks/infra/stack"
)

// The extrapolation's deployed function is the one infra/stack declares
// (no ephemeral storage is set there: Lambda's default 512 MB /tmp; no
// INGEST_INVOCATION_SECONDS either: ingest.DefaultBudget).
func TestDeployedIsTheStack(t *testing.T) {
	if aws.MemoryMB != stack.IngestMemoryMB || aws.TimeoutSeconds != stack.IngestTimeoutSeconds {
		t.Errorf("simhour assumes %v MB and %v s; infra/stack declares %v MB and %v s",
			aws.MemoryMB, aws.TimeoutSeconds, stack.IngestMemoryMB, stack.IngestTimeoutSeconds)
	}
}

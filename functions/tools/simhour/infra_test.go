package main

import (
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/infra/stack"
)

// The extrapolation's deployed function is the one infra/stack declares
// (no ephemeral storage is set there: Lambda's default 512 MB /tmp; no
// INGEST_INVOCATION_SECONDS either: ingest.DefaultBudget), and its upload
// limit is infra's MOVIE_MAX_BYTES, which the API's default parts can
// carry (S3 takes 10,000).
func TestDeployedIsTheStack(t *testing.T) {
	if aws.MemoryMB != stack.IngestMemoryMB || aws.TimeoutSeconds != stack.IngestTimeoutSeconds {
		t.Errorf("simhour assumes %v MB and %v s; infra/stack declares %v MB and %v s",
			aws.MemoryMB, aws.TimeoutSeconds, stack.IngestMemoryMB, stack.IngestTimeoutSeconds)
	}
	if aws.MaxUploadBytes != stack.MovieMaxBytes || stack.MovieMaxBytes > httpapi.DefaultPartBytes*domain.MaxParts {
		t.Errorf("simhour assumes MOVIE_MAX_BYTES %d; infra/stack sets %d (parts carry %d)",
			aws.MaxUploadBytes, int64(stack.MovieMaxBytes), int64(httpapi.DefaultPartBytes*domain.MaxParts))
	}
}

package dynamo_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// newStore returns a movie store on fresh tables.
func newStore(tb testing.TB) (*dynamo.MovieStore, *dynamodb.Client, dynamo.Tables) {
	tb.Helper()
	client := testenv.DynamoDB(tb)
	t := testenv.NewTables(tb, client)
	return dynamo.NewMovieStore(client, t.Movies), client, t
}

// newID returns a fresh 128-bit lease or job ID.
func newID(tb testing.TB) string {
	tb.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(b)
}

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// createMovie stores a ready movie with one marker.
func createMovie(tb testing.TB, s *dynamo.MovieStore, id string) domain.Movie {
	tb.Helper()
	m, err := domain.NewMovie(id, "Movie "+id, 300, 30, t0)
	if err != nil {
		tb.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "m1", Label: "tip", X: 0.5, Y: 0.5}}
	if err := s.Create(context.Background(), m); err != nil {
		tb.Fatalf("create movie: %v", err)
	}
	return m
}

// apply runs a command and fails the test on error.
func apply(tb testing.TB, s *dynamo.MovieStore, id string, c domain.Command) domain.Movie {
	tb.Helper()
	m, err := s.Commit(context.Background(), id, c)
	if err != nil {
		tb.Fatalf("%T: %v", c, err)
	}
	return m
}

// refused runs a command, requires the given refusal code and returns the error.
func refused(tb testing.TB, s *dynamo.MovieStore, id string, c domain.Command, want domain.Code) *domain.Error {
	tb.Helper()
	_, err := s.Commit(context.Background(), id, c)
	e, ok := domain.AsError(err)
	if !ok || e.Code != want {
		tb.Fatalf("%T: got %v, want refusal %s", c, err, want)
	}
	return e
}

package logging_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
)

const (
	leaseID = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	jobID   = "11111111111111111111111111111111"
	eventID = "c81e728d9d4c2f636f067f89cc14862c"
)

// TestLoggerFollowsTheIDPolicy: a job ID survives only as the jobId
// attribute (and the other public identifiers as theirs); an ID-shaped run
// anywhere else, in a string, an error, a group or the message, is redacted.
func TestLoggerFollowsTheIDPolicy(t *testing.T) {
	var buf bytes.Buffer
	log := logging.New(&buf, slog.LevelDebug)
	log.Info("claim of "+jobID+" failed",
		slog.String("jobId", jobID), slog.String("movieId", "movie-1"), slog.String("eventID", eventID),
		slog.String("error", "malformed movie item movie-1: lease.id "+leaseID),
		slog.Any("cause", errors.New("conflict with job "+jobID)),
		slog.Group("row", slog.String("title", "x"+leaseID)),
		slog.Int("frames", 7))
	line := buf.String()
	if strings.Contains(line, leaseID) {
		t.Errorf("lease ID logged: %s", line)
	}
	if n := strings.Count(line, jobID); n != 1 || !strings.Contains(line, `"jobId":"`+jobID+`"`) {
		t.Errorf("the job ID appears %d times, want once as jobId: %s", n, line)
	}
	for _, keep := range []string{`"movieId":"movie-1"`, `"eventID":"` + eventID + `"`, `"frames":7`, events.Redacted, "malformed movie item movie-1"} {
		if !strings.Contains(line, keep) {
			t.Errorf("log line lost %s: %s", keep, line)
		}
	}
}

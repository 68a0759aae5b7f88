// Package logging builds the JSON slog logger every function uses. Lambda
// captures stdout into CloudWatch Logs, where each line is one JSON record.
package logging

import (
	"io"
	"log/slog"
)

// New returns a JSON logger at level writing to w.
func New(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

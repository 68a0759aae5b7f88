// Command streamprocessor is the Lambda function behind the movies table's
// stream: it enqueues trace jobs and writes the audit table
// (see functions/internal/streamproc and docs/stream.md).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/wiring"
)

func main() {
	p, log, err := wiring.NewProcess(context.Background(), os.Getenv, os.Stdout,
		envvar.AuditTable, envvar.TraceQueueURL, envvar.PoisonQueueURL)
	if err != nil {
		log.Error("init", slog.String("error", err.Error()))
		os.Exit(1)
	}
	h, err := wiring.StreamProcessor(p.Config, p.Clients, p.Log)
	if err != nil {
		log.Error("stream processor", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}

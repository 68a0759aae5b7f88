// Command streamprocessor is the Lambda function behind the movies table's
// stream: it enqueues trace jobs and writes the audit table
// (see functions/internal/streamproc and docs/stream.md).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/movietrace/tracinglocks/functions/emf"
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
	// Business metrics as EMF on stdout, which CloudWatch Logs turns into
	// metrics (namespace MovieTracing, the stack's dashboard).
	h, err := wiring.StreamProcessor(p.Config, p.Clients, p.Log, emf.New(os.Stdout, nil))
	if err != nil {
		log.Error("stream processor", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}

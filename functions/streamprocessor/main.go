// Command streamprocessor is the Lambda function behind the movies table's
// stream: it enqueues trace jobs and writes the audit table
// (see functions/internal/streamproc and docs/stream.md).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/movietrace/tracinglocks/events/emf"
	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/internal/wiring"
)

func main() {
	log := logging.New(os.Stdout, slog.LevelInfo)
	cfg, err := config.FromProcess(envvar.AuditTable, envvar.TraceQueueURL, envvar.PoisonQueueURL)
	if err != nil {
		// A missing setting is a deployment error: fail the init, visibly.
		log.Error("configuration", slog.String("error", err.Error()))
		os.Exit(1)
	}
	log = logging.New(os.Stdout, cfg.LogLevel)
	clients, err := awsclients.New(context.Background(), cfg)
	if err != nil {
		log.Error("AWS clients", slog.String("error", err.Error()))
		os.Exit(1)
	}
	// Business metrics as EMF on stdout, which CloudWatch Logs turns into
	// metrics (namespace MovieTracing, the stack's dashboard).
	h, err := wiring.StreamProcessor(cfg, clients, log, emf.New(os.Stdout, nil))
	if err != nil {
		log.Error("stream processor", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}

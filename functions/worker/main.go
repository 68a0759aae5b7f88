// Command worker is the Lambda function behind the trace-job queue: it
// claims each job once, writes its frames fenced on the job's lease and
// publishes the terminal state (see functions/internal/worker and
// docs/worker.md). The tracer is the video tracer on the movies bucket
// (MOVIES_BUCKET; ffmpeg and ffprobe from the layer, FFMPEG/FFPROBE; see
// docs/tracer.md), or the synthetic one with TRACER=synthetic (configured
// by TRACER_FRAME_DELAY and TRACER_FAIL_AT_FRAME). The wiring is
// functions/internal/wiring, which the local stack uses too.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/movietrace/tracinglocks/functions/emf"
	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/wiring"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

func main() {
	// A missing or malformed setting is a deployment error: fail the init, visibly.
	p, log, err := wiring.NewProcess(context.Background(), os.Getenv, os.Stdout,
		envvar.MoviesTable, envvar.FramesTable, envvar.TraceQueueURL)
	if err != nil {
		log.Error("init", slog.String("error", err.Error()))
		os.Exit(1)
	}
	cfg, clients := p.Config, p.Clients
	tr, err := wiring.Tracer(cfg, clients, os.Getenv)
	if err != nil {
		log.Error("tracer configuration", slog.String("error", err.Error()))
		os.Exit(1)
	}
	// Business metrics as EMF on stdout, the function's log stream.
	w, err := wiring.Worker(cfg, clients, tr, log, os.Getenv, func(o *worker.Options) { o.Metrics = emf.New(os.Stdout, nil) })
	if err != nil {
		log.Error("worker configuration", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(w.Handle)
}

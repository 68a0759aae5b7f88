// Command sweeper is the scheduled Lambda function (an EventBridge rule,
// every few minutes) that finalises stale tracing leases nobody took over
// (functions/internal/sweeper): their rows end tracing_failed with a summary
// saying why, and the stream processor projects the movie.tracing.failed
// audit item from that change. It also expires uploads that never arrived
// (awaiting_upload past their expiry become ingest_failed).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/sweeper"
	"github.com/movietrace/tracinglocks/functions/internal/wiring"
)

func main() {
	log := logging.New(os.Stdout, slog.LevelInfo)
	cfg, err := config.FromProcess(envvar.MoviesTable, envvar.FramesTable, envvar.MoviesBucket)
	if err != nil {
		log.Error("configuration", slog.String("error", err.Error()))
		os.Exit(1)
	}
	log = logging.New(os.Stdout, cfg.LogLevel)
	s, err := build(context.Background(), cfg, log)
	if err != nil {
		log.Error("sweeper configuration", slog.String("error", err.Error()))
		os.Exit(1)
	}
	// The scheduled event carries nothing the sweep needs. A failed listing
	// is returned, so the invocation counts as an error (and alarms); the
	// next schedule retries.
	lambda.Start(func(ctx context.Context, _ any) error {
		rep, err := s.Sweep(ctx)
		if err != nil {
			log.ErrorContext(ctx, "sweep failed", slog.String("error", err.Error()))
			return err
		}
		log.InfoContext(ctx, "sweep done", slog.Int("movies", rep.Movies), slog.Int("finalized", rep.Finalized),
			slog.Int("skipped", rep.Skipped), slog.Int("failed", rep.Failed))
		return nil
	})
}

// build wires the sweeper from cfg as the Lambda runs it; apiOptions (e.g.
// a request counter) go to every AWS client.
func build(ctx context.Context, cfg config.Config, log *slog.Logger, apiOptions ...func(*aws.Config)) (*sweeper.Sweeper, error) {
	clients, err := awsclients.New(ctx, cfg, apiOptions...)
	if err != nil {
		return nil, fmt.Errorf("AWS clients: %w", err)
	}
	files, err := s3store.New(s3store.Options{Client: clients.S3, Bucket: cfg.MoviesBucket})
	if err != nil {
		return nil, fmt.Errorf("movies bucket: %w", err)
	}
	return wiring.Sweeper(cfg, clients, log, files, 0)
}

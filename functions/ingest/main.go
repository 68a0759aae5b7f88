// Command ingest is the Lambda function behind the movies bucket's upload
// queue: S3 object-created events (SQS messages wrapping events.S3Event)
// become ready or ingest_failed movies (see functions/internal/ingest).
// ffmpeg and ffprobe come from the layer (FFMPEG, FFPROBE).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/ingest"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/wiring"
)

func main() {
	h, log, err := build(context.Background(), os.Getenv)
	if err != nil {
		log.Error("init", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}

// apiOptions (e.g. a request counter) go to every AWS client.
func build(ctx context.Context, getenv func(string) string, apiOptions ...func(*aws.Config)) (*ingest.Handler, *slog.Logger, error) {
	p, log, err := wiring.NewProcess(ctx, getenv, os.Stdout, envvar.MoviesTable, envvar.MoviesBucket, envvar.UploadQueueURL)
	if err != nil {
		return nil, log, err
	}
	if len(apiOptions) > 0 {
		if p.Clients, err = awsclients.New(ctx, p.Config, apiOptions...); err != nil {
			return nil, log, err
		}
	}
	cfg, clients := p.Config, p.Clients
	files, err := s3store.New(s3store.Options{Client: clients.S3, Bucket: cfg.MoviesBucket})
	if err != nil {
		return nil, log, err
	}
	// Each range continues in a new invocation through the upload queue.
	cont, err := wiring.IngestContinuation(clients.SQS, cfg.UploadQueueURL)
	if err != nil {
		return nil, log, err
	}
	h, err := wiring.Ingest(cfg, clients, files, log, cont)
	return h, log, err
}

// Command api is the Lambda function behind the HTTP API: the browser API of
// functions/internal/httpapi through aws-lambda-go-api-proxy's v2 adapter
// (see docs/api.md).
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/movietrace/tracinglocks/functions/emf"
	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
)

// The stores are what the handler needs.
var (
	_ httpapi.MovieStore     = (*dynamo.MovieStore)(nil)
	_ httpapi.FrameReader    = (*dynamo.FrameStore)(nil)
	_ httpapi.MovieFiles     = (*s3store.Store)(nil)
	_ httpapi.MultipartFiles = (*s3store.Store)(nil)
	_ httpapi.MovieCatalog   = (*dynamo.MovieStore)(nil)
)

func main() {
	h, log, err := build(context.Background(), os.Getenv)
	if err != nil {
		// Reported once; Lambda reports the failed init and retries it.
		log.Error("init", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(httpadapter.NewV2(h).ProxyWithContext)
}

// build wires the handler from the environment. The authenticator is chosen
// first: DEV_AUTH set inside Lambda fails the init before anything else.
// apiOptions (e.g. a request counter) go to every AWS client.
func build(ctx context.Context, getenv func(string) string, apiOptions ...func(*aws.Config)) (*httpapi.Handler, *slog.Logger, error) {
	log := logging.New(os.Stdout, slog.LevelInfo)
	auth, err := httpapi.ChooseAuthenticator(getenv)
	if err != nil {
		return nil, log, err
	}
	cfg, err := config.FromEnv(getenv, envvar.MoviesTable, envvar.FramesTable, envvar.AuditTable, envvar.MoviesBucket)
	if err != nil {
		return nil, log, err
	}
	log = logging.New(os.Stdout, cfg.LogLevel)
	clients, err := awsclients.New(ctx, cfg, apiOptions...)
	if err != nil {
		return nil, log, err
	}
	files, err := s3store.New(s3store.Options{Client: clients.S3, Bucket: cfg.MoviesBucket})
	if err != nil {
		return nil, log, err
	}
	movies := dynamo.NewMovieStore(clients.DynamoDB, cfg.Tables.Movies)
	frames := dynamo.NewFrameStore(clients.DynamoDB, cfg.Tables.Frames)
	h, err := httpapi.New(httpapi.Config{
		Movies:         movies,
		Frames:         frames,
		Auth:           auth,
		Now:            time.Now,
		LeaseDuration:  cfg.LeaseDuration,
		Logger:         log,
		Files:          files,
		Catalog:        movies,
		MaxUploadBytes: cfg.MaxUploadBytes,
		Multipart:      files,
		PartBytes:      cfg.PartBytes,
		History:        dynamo.NewAuditReader(clients.DynamoDB, cfg.Tables.Audit),
		Metrics:        emf.New(os.Stdout, nil),
	})
	if err != nil {
		return nil, log, err
	}
	log.Info("ready", slog.String("auth", auth.Name()), slog.Float64("leaseSeconds", cfg.LeaseDuration.Seconds()))
	return h, log, nil
}

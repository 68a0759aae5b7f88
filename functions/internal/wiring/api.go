package wiring

import (
	"errors"
	"log/slog"
	"time"

	"github.com/movietrace/tracinglocks/functions/emf"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
)

// The stores are what the API handler needs.
var (
	_ httpapi.MovieStore     = (*dynamo.MovieStore)(nil)
	_ httpapi.FrameReader    = (*dynamo.FrameStore)(nil)
	_ httpapi.MovieFiles     = (*s3store.Store)(nil)
	_ httpapi.MovieCatalog   = (*dynamo.MovieStore)(nil)
	_ httpapi.MultipartFiles = (*s3store.Store)(nil)
)

// API builds the browser API on cfg's three tables and the movies bucket
// (files): the lease duration and the largest upload are cfg's, the clock
// the real one. The Lambda main and the local stack differ only in what
// they pass: the authenticator (JWT behind the HTTP API's authorizer, or the
// local OIDC provider's), the clients, and metrics (EMF on the Lambda's
// stdout; nil, none, locally).
func API(cfg config.Config, clients awsclients.Clients, files *s3store.Store, auth httpapi.Authenticator, log *slog.Logger, metrics *emf.Writer) (*httpapi.Handler, error) {
	if clients.DynamoDB == nil || files == nil {
		return nil, errors.New("wiring: the API needs the DynamoDB client and the movies bucket")
	}
	movies := dynamo.NewMovieStore(clients.DynamoDB, cfg.Tables.Movies)
	frames := dynamo.NewFrameStore(clients.DynamoDB, cfg.Tables.Frames)
	images, err := media.NewProvider(media.ProviderOptions{Objects: files})
	if err != nil {
		return nil, err
	}
	return httpapi.New(httpapi.Config{
		Movies:         movies,
		Frames:         frames,
		Auth:           auth,
		Now:            time.Now,
		LeaseDuration:  cfg.LeaseDuration,
		Logger:         log,
		Files:          files,
		Images:         images,
		Catalog:        movies,
		MaxUploadBytes: cfg.MaxUploadBytes,
		Multipart:      files,
		PartBytes:      cfg.PartBytes,
		History:        dynamo.NewAuditReader(clients.DynamoDB, cfg.Tables.Audit),
		Metrics:        metrics,
	})
}

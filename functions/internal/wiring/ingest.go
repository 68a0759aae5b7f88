package wiring

import (
	"errors"
	"log/slog"

	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/ingest"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
)

// Ingest builds the ingest handler (S3 object-created events to ready or
// ingest_failed movies) on cfg's movies table and the movies bucket (files).
// The Lambda main and the local stack's upload-queue poller both call it.
func Ingest(cfg config.Config, clients awsclients.Clients, files *s3store.Store, log *slog.Logger) (*ingest.Handler, error) {
	if clients.DynamoDB == nil || files == nil {
		return nil, errors.New("wiring: the ingest needs the DynamoDB client and the movies bucket")
	}
	return ingest.New(ingest.Options{Movies: dynamo.NewMovieStore(clients.DynamoDB, cfg.Tables.Movies), Files: files, Log: log})
}

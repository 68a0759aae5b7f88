package wiring

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/ingest"
	"github.com/movietrace/tracinglocks/functions/internal/purge"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/sweeper"
)

var _ sweeper.Movies = dynamo.SweepStore{}

// Sweeper builds the sweeper on cfg's movies table. rules, when given,
// replace the default (sweeper.StaleTrace). With files (the movies bucket),
// it also expires uploads that never arrived (ingest.Handler.ExpireUploads
// as a hook), deleting only the upload object of an expired movie, and it
// finishes the deletion of deleting movies (purge.Finisher as a hook: every
// object under the movie's prefixes, its frames, then its row once it has
// been deleting for grace; 0: purge.DefaultGrace).
func Sweeper(cfg config.Config, clients awsclients.Clients, log *slog.Logger, files *s3store.Store, grace time.Duration, rules ...sweeper.Rule) (*sweeper.Sweeper, error) {
	if clients.DynamoDB == nil || cfg.Tables.Movies == "" {
		return nil, errors.New("wiring: the sweeper needs the DynamoDB client and the movies table")
	}
	store := dynamo.NewMovieStore(clients.DynamoDB, cfg.Tables.Movies)
	var hooks []sweeper.Hook
	if files != nil {
		h, err := ingest.New(ingest.Options{Movies: store, Files: uploadOnly{files}, Log: log})
		if err != nil {
			return nil, err
		}
		hooks = append(hooks, h.ExpireUploads)
		if cfg.Tables.Frames == "" {
			return nil, errors.New("wiring: the sweeper finishes deletions and needs the frames table")
		}
		fin := purge.Finisher{Files: files, Frames: dynamo.NewFrameStore(clients.DynamoDB, cfg.Tables.Frames), Rows: store, Grace: grace, Log: log}
		hooks = append(hooks, fin.Hook)
	}
	return sweeper.New(sweeper.Options{
		Movies: dynamo.SweepStore{MovieStore: store},
		Rules:  rules, Hooks: hooks, Log: log,
	})
}

// uploadOnly is the movies bucket as the upload expiry uses it: it deletes
// only the upload object (a file that arrived too late). An expired movie
// was never ingested; whatever frames a racing ingest left are removed by
// the movie's DELETE, which its failure summary asks for. So the sweeper's
// S3 grant is s3:DeleteObject on uploads/* alone.
type uploadOnly struct{ *s3store.Store }

func (u uploadOnly) DeleteFiles(ctx context.Context, movieID string) error {
	return u.Delete(ctx, s3store.UploadKey(movieID))
}

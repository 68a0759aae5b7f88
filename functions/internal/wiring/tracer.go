package wiring

import (
	"context"
	"errors"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
)

// SourceURLExpiry is how long the presigned GET the tracer gives ffmpeg
// stays valid: longer than a worker invocation (ffmpeg makes range
// requests throughout).
const SourceURLExpiry = time.Hour

// Tracer builds the worker's tracer: the video tracer on the movies bucket
// (cfg.MoviesBucket: the uploaded file read by ffmpeg through a presigned
// GET, checkpoints under s3store.TrackerPrefix) unless TRACER=synthetic;
// the synthetic tracer when no bucket is configured (tracer.FromEnv).
func Tracer(cfg config.Config, clients awsclients.Clients, getenv func(string) string) (tracer.Tracer, error) {
	var src tracer.Source
	var states tracer.States
	if cfg.MoviesBucket != "" {
		if clients.S3 == nil {
			return nil, errors.New("wiring: the video tracer needs the S3 client")
		}
		store, err := s3store.New(s3store.Options{Client: clients.S3, Bucket: cfg.MoviesBucket})
		if err != nil {
			return nil, err
		}
		src, states = MovieFiles(store)
	}
	return tracer.FromEnv(getenv, src, states)
}

// MovieFiles are the video tracer's source (a presigned GET of the movie's
// uploaded file) and checkpoint store on a movies bucket.
func MovieFiles(store *s3store.Store) (tracer.Source, tracer.States) {
	src := tracer.SourceFunc(func(ctx context.Context, m domain.Movie) (string, error) {
		return store.UploadURL(ctx, m.ID, SourceURLExpiry)
	})
	return src, tracer.ObjectStates{Store: store, Prefix: s3store.TrackerPrefix, NotFound: s3store.ErrNotFound}
}

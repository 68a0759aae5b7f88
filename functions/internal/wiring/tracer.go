package wiring

import (
	"errors"

	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
)

// Tracer builds the worker's tracer: the video tracer on the movies bucket
// (cfg.MoviesBucket: a movie's frames read from its rendition by the one
// frame provider, checkpoints under s3store.TrackerPrefix) unless
// TRACER=synthetic; the synthetic tracer when no bucket is configured
// (tracer.FromEnv).
func Tracer(cfg config.Config, clients awsclients.Clients, getenv func(string) string) (tracer.Tracer, error) {
	var o tracer.VideoOptions
	if cfg.MoviesBucket != "" {
		if clients.S3 == nil {
			return nil, errors.New("wiring: the video tracer needs the S3 client")
		}
		store, err := s3store.New(s3store.Options{Client: clients.S3, Bucket: cfg.MoviesBucket})
		if err != nil {
			return nil, err
		}
		if o, err = MovieFrames(store); err != nil {
			return nil, err
		}
	}
	return tracer.FromEnv(getenv, o)
}

// MovieFrames are the video tracer's options on a movies bucket: a movie's
// frames read from its rendition (media.Provider, the provider the API's
// frame images come from: the page's frame N is the tracer's frame N) and
// the checkpoints under s3store.TrackerPrefix. There is no Source: a
// movie without a rendition is refused with a sentence, and the worker
// never reads the upload.
func MovieFrames(store *s3store.Store) (tracer.VideoOptions, error) {
	frames, err := media.NewProvider(media.ProviderOptions{Objects: store})
	if err != nil {
		return tracer.VideoOptions{}, err
	}
	return tracer.VideoOptions{Frames: frames,
		States: tracer.ObjectStates{Store: store, Prefix: s3store.TrackerPrefix, NotFound: s3store.ErrNotFound}}, nil
}

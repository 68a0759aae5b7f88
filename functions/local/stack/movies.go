package stack

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"

	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	jobqueue "github.com/movietrace/tracinglocks/functions/internal/queue"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/wiring"
)

// The movies bucket of the local stack: what the CDK stack's movies.go
// declares, on the S3 emulator (fauxqs): the bucket, its upload queue (with
// a dead-letter queue, five receives) and the object-created notification
// for uploads/ to it; the ingest handler runs behind a QueuePoller on that
// queue, as the ingest Lambda runs behind its event source mapping.

var unsafeBucket = regexp.MustCompile(`[^a-z0-9-]+`)

// bucketName turns the stack's prefix into an S3 bucket name.
func bucketName(prefix string) string {
	name := strings.Trim(unsafeBucket.ReplaceAllString(strings.ToLower(prefix), "-"), "-")
	if len(name) > 50 {
		name = name[:50]
	}
	return name + "-movies"
}

// startMovieStorage creates the bucket and the upload queue and builds the
// ingest; the caller starts its poller.
func (s *Stack) startMovieStorage(ctx context.Context, opts Options) (ingestPoller *QueuePoller, err error) {
	endpoint := opts.S3Endpoint
	if endpoint == "" {
		endpoint = opts.SQSEndpoint // fauxqs serves both
	}
	// The stack (and so the browser, through presigned URLs) reaches the
	// emulator through s3Front, which serves GETs as S3 does.
	if s.s3Front, err = startS3Front(endpoint); err != nil {
		return nil, err
	}
	endpoint = s.s3Front.URL
	cfg := LocalConfig()
	if opts.Retryer != nil {
		cfg.Retryer = opts.Retryer
	}
	s.S3 = s3store.NewClient(cfg, endpoint)
	if u, err := url.Parse(endpoint); err == nil {
		s.storageOrigin = u.Scheme + "://" + u.Host
	}
	uploadsURL, uploadsARN, err := createQueue(ctx, s.SQS, opts.Prefix+"-movie-uploads", opts.VisibilityTimeout)
	if err != nil {
		return nil, err
	}
	s.UploadQueueURL = uploadsURL
	bucket := bucketName(opts.Prefix)
	if err := s3store.CreateBucket(ctx, s.S3, bucket, uploadsARN, s3store.UploadPrefix); err != nil {
		return nil, err
	}
	if s.Files, err = s3store.New(s3store.Options{Client: s.S3, Bucket: bucket}); err != nil {
		return nil, err
	}
	// Each range of an ingest continues through the upload queue.
	cont, err := wiring.IngestContinuation(s.SQS, uploadsURL)
	if err != nil {
		return nil, err
	}
	h, err := wiring.Ingest(config.Config{Tables: config.Tables(s.Tables)}, awsclients.Clients{DynamoDB: s.DynamoDB, S3: s.S3}, s.Files,
		opts.Log.With(slog.String("component", "ingest")), cont)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	s.Ingest = h
	return &QueuePoller{
		Client: s.SQS, QueueURL: uploadsURL, QueueARN: uploadsARN, Region: Region,
		Handle: h.Handle, Convert: jobqueue.LambdaMessage, BatchSize: 1,
		Log: opts.Log.With(slog.String("component", "ingest-poller")),
	}, nil
}

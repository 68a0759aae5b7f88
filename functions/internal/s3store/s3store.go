// Package s3store is the movies bucket: presigned upload and download URLs,
// objects written by the ingest (frame images), deletion by prefix, and
// (for the local stack) the bucket's creation with its S3 -> SQS
// notification. It speaks S3 through aws-sdk-go-v2; locally the endpoint is
// the fauxqs emulator (S3_ENDPOINT), with path-style addressing.
package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// NewClient builds an S3 client; with an endpoint (an emulator) it uses
// path-style URLs (http://127.0.0.1:port/bucket/key), which need no DNS.
func NewClient(cfg aws.Config, endpoint string) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.UsePathStyle = true
		}
	})
}

// Options configure a Store.
type Options struct {
	Client *s3.Client
	Bucket string
	// Now is the clock of the expiry times it reports (time.Now when nil).
	Now func() time.Time
}

// Store is one bucket.
type Store struct {
	client  *s3.Client
	presign *s3.PresignClient
	bucket  string
	now     func() time.Time
}

// New returns the store of opts.Bucket.
func New(opts Options) (*Store, error) {
	switch {
	case opts.Client == nil:
		return nil, errors.New("s3store: no client")
	case opts.Bucket == "":
		return nil, errors.New("s3store: no bucket")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Store{client: opts.Client, presign: s3.NewPresignClient(opts.Client), bucket: opts.Bucket, now: opts.Now}, nil
}

// Bucket is the bucket's name.
func (s *Store) Bucket() string { return s.bucket }

// PresignedRequest is a URL a browser or CLI uses directly against S3.
type PresignedRequest struct {
	Method string
	URL    string
	// Headers must be sent as they are: they are part of the signature.
	Headers   map[string]string
	ExpiresAt time.Time
}

// PresignPut returns a PUT URL for exactly one object of contentType and
// size bytes: S3 refuses a request whose Content-Type or Content-Length
// differs from what was signed.
func (s *Store) PresignPut(ctx context.Context, key, contentType string, size int64, expires time.Duration) (PresignedRequest, error) {
	now := s.now()
	req, err := s.presign.PresignPutObject(ctx, &s3.PutObjectInput{
		Bucket: &s.bucket, Key: &key, ContentType: &contentType, ContentLength: &size,
	}, s3.WithPresignExpires(expires))
	if err != nil {
		return PresignedRequest{}, fmt.Errorf("presign put %s: %w", key, err)
	}
	headers := map[string]string{"Content-Type": contentType}
	for name, vs := range req.SignedHeader {
		if http.CanonicalHeaderKey(name) == "Host" || len(vs) == 0 {
			continue
		}
		headers[http.CanonicalHeaderKey(name)] = vs[0]
	}
	headers["Content-Length"] = strconv.FormatInt(size, 10)
	return PresignedRequest{Method: req.Method, URL: req.URL, Headers: headers, ExpiresAt: now.Add(expires)}, nil
}

// PresignGet returns a GET URL for key, valid for expires.
func (s *Store) PresignGet(ctx context.Context, key string, expires time.Duration) (string, error) {
	req, err := s.presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key}, s3.WithPresignExpires(expires))
	if err != nil {
		return "", fmt.Errorf("presign get %s: %w", key, err)
	}
	return req.URL, nil
}

// ErrNotFound: no object at that key.
var ErrNotFound = errors.New("s3store: no such object")

// Object is what Head reports.
type Object struct {
	Size        int64
	ContentType string
}

// Head returns the object's size and type, or ErrNotFound.
func (s *Store) Head(ctx context.Context, key string) (Object, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		if notFound(err) {
			return Object{}, ErrNotFound
		}
		return Object{}, fmt.Errorf("head %s: %w", key, err)
	}
	return Object{Size: aws.ToInt64(out.ContentLength), ContentType: aws.ToString(out.ContentType)}, nil
}

// Put writes a small object (a frame image) from memory.
func (s *Store) Put(ctx context.Context, key, contentType string, body []byte) error {
	n := int64(len(body))
	in := &s3.PutObjectInput{
		Bucket: &s.bucket, Key: &key, ContentType: &contentType, ContentLength: &n, Body: bytes.NewReader(body),
	}
	if strings.HasPrefix(key, FramesPrefix) {
		// A rendition never changes (a movie is ingested once).
		in.CacheControl = aws.String("private, max-age=31536000, immutable")
	}
	_, err := s.client.PutObject(ctx, in)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// Get reads a whole object into memory (frame images; never a movie).
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		if notFound(err) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

// Delete deletes one object (no error when there is none).
func (s *Store) Delete(ctx context.Context, key string) error {
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key}); err != nil && !notFound(err) {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// DeletePrefix deletes every object whose key starts with prefix (1000 a
// request) and returns how many it deleted.
func (s *Store) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if prefix == "" {
		return 0, errors.New("s3store: refusing to delete the whole bucket")
	}
	deleted := 0
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return deleted, fmt.Errorf("list %s: %w", prefix, err)
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]s3types.ObjectIdentifier, len(page.Contents))
		for i, o := range page.Contents {
			ids[i] = s3types.ObjectIdentifier{Key: o.Key}
		}
		out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: &s.bucket, Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return deleted, fmt.Errorf("delete under %s: %w", prefix, err)
		}
		if len(out.Errors) > 0 {
			return deleted, fmt.Errorf("delete under %s: %d objects failed, first %s: %s", prefix, len(out.Errors),
				aws.ToString(out.Errors[0].Key), aws.ToString(out.Errors[0].Code))
		}
		deleted += len(ids)
	}
	return deleted, nil
}

func notFound(err error) bool {
	var nsk *s3types.NoSuchKey
	var nf *s3types.NotFound
	var api smithy.APIError
	return errors.As(err, &nsk) || errors.As(err, &nf) ||
		(errors.As(err, &api) && (api.ErrorCode() == "NotFound" || api.ErrorCode() == "NoSuchKey"))
}

// CreateBucket creates the bucket (a no-op when it exists) and, when
// queueARN is set, sends object-created events for keys under prefix to
// that queue: what the CDK stack declares, for the local stack.
func CreateBucket(ctx context.Context, client *s3.Client, bucket, queueARN, prefix string) error {
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		var owned *s3types.BucketAlreadyOwnedByYou
		if !errors.As(err, &owned) {
			return fmt.Errorf("create bucket %s: %w", bucket, err)
		}
	}
	if queueARN == "" {
		return nil
	}
	_, err := client.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{
		Bucket: &bucket,
		NotificationConfiguration: &s3types.NotificationConfiguration{
			QueueConfigurations: []s3types.QueueConfiguration{{
				Id:       aws.String("movie-uploads"),
				QueueArn: &queueARN,
				Events:   []s3types.Event{s3types.EventS3ObjectCreated},
				Filter: &s3types.NotificationConfigurationFilter{Key: &s3types.S3KeyFilter{
					FilterRules: []s3types.FilterRule{{Name: s3types.FilterRuleNamePrefix, Value: &prefix}},
				}},
			}},
		},
	})
	if err != nil {
		return fmt.Errorf("bucket %s notification: %w", bucket, err)
	}
	return nil
}

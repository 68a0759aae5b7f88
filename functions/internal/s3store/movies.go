package s3store

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The key layout of the movies bucket: the uploaded file, and under
// frames/<movieId>/ its rendition (package media: chunks/<k>.mp4). Only UploadPrefix notifies the ingest (the CDK stack's filter).
const (
	UploadPrefix = "uploads/"
	FramesPrefix = "frames/"
	// TrackerPrefix holds the tracer's checkpoints:
	// tracker/<movieId>/<settings>/<frame> (tracer.ObjectStates).
	TrackerPrefix = "tracker/"
	// PendingTag is the tag every upload carries until the ingest makes its
	// movie ready; the bucket's lifecycle deletes an upload still tagged
	// after a few days (infra/stack/movies.go).
	PendingTag = "upload=pending"
)

// UploadKey is the key of a movie's file.
func UploadKey(movieID string) string { return UploadPrefix + movieID }

// MovieIDOfUpload returns the movie ID of an upload key, or "" when key is
// not one.
func MovieIDOfUpload(key string) string {
	id, ok := strings.CutPrefix(key, UploadPrefix)
	if !ok || id == "" || strings.Contains(id, "/") {
		return ""
	}
	return id
}

// PresignUpload presigns the PUT of a movie's file: exactly size bytes of
// contentType, tagged pending, and only if no file is there yet
// (If-None-Match: *), so a second upload to the same movie is refused by S3
// (412) rather than replacing the file a ready movie was ingested from.
func (s *Store) PresignUpload(ctx context.Context, movieID, contentType string, size int64, expires time.Duration) (PresignedRequest, error) {
	key := UploadKey(movieID)
	now := s.now()
	req, err := s.presign.PresignPutObject(ctx, &s3.PutObjectInput{
		Bucket: &s.bucket, Key: &key, ContentType: &contentType, ContentLength: &size,
		Tagging: aws.String(PendingTag), IfNoneMatch: aws.String("*"),
	}, s3.WithPresignExpires(expires))
	if err != nil {
		return PresignedRequest{}, fmt.Errorf("presign upload %s: %w", key, err)
	}
	headers := map[string]string{}
	for name, vs := range req.SignedHeader {
		if n := http.CanonicalHeaderKey(name); n != "Host" && n != "Content-Length" && len(vs) > 0 {
			headers[n] = vs[0]
		}
	}
	// Signed or not, these must be sent as they are.
	headers["Content-Type"] = contentType
	headers["X-Amz-Tagging"] = PendingTag
	headers["If-None-Match"] = "*"
	return PresignedRequest{Method: req.Method, URL: req.URL, Headers: headers, ExpiresAt: now.Add(expires)}, nil
}

// PresignUploadURL is PresignUpload as the API's MovieFiles port wants it:
// the URL and the headers to send (the method is PUT).
func (s *Store) PresignUploadURL(ctx context.Context, movieID, contentType string, size int64, expires time.Duration) (string, map[string]string, error) {
	req, err := s.PresignUpload(ctx, movieID, contentType, size, expires)
	return req.URL, req.Headers, err
}

// UploadURL presigns the GET of a movie's file (ffprobe and ffmpeg read it
// over HTTP, with range requests).
func (s *Store) UploadURL(ctx context.Context, movieID string, expires time.Duration) (string, error) {
	return s.PresignGet(ctx, UploadKey(movieID), expires)
}

// DeleteFiles deletes every object of a movie (DeleteMovieObjects).
func (s *Store) DeleteFiles(ctx context.Context, movieID string) error {
	_, err := s.DeleteMovieObjects(ctx, movieID)
	return err
}

// DeleteMovieObjects deletes every object of a movie: its upload (UploadKey,
// exactly) and everything under "<top>/<movieID>/" for every top-level
// prefix of the bucket, known (frames, tracker) or not, so a layout added
// later under a movie's own prefix is covered without naming it here. It is
// idempotent: deleting what is gone is no error. It returns how many
// objects it deleted.
func (s *Store) DeleteMovieObjects(ctx context.Context, movieID string) (int, error) {
	if movieID == "" || strings.ContainsAny(movieID, "/") {
		return 0, fmt.Errorf("s3store: refusing to delete the files of movie %q", movieID)
	}
	if err := s.Delete(ctx, UploadKey(movieID)); err != nil {
		return 0, err
	}
	tops, err := s.topPrefixes(ctx)
	if err != nil {
		return 0, err
	}
	deleted := 0
	for _, top := range tops {
		n, err := s.DeletePrefix(ctx, top+movieID+"/")
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

// topPrefixes lists the bucket's top-level "directories" (ListObjectsV2
// with a delimiter), with the known ones always included.
func (s *Store) topPrefixes(ctx context.Context) ([]string, error) {
	seen := map[string]bool{UploadPrefix: true, FramesPrefix: true, TrackerPrefix: true}
	tops := []string{UploadPrefix, FramesPrefix, TrackerPrefix}
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Delimiter: aws.String("/")})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list the top-level prefixes: %w", err)
		}
		for _, p := range page.CommonPrefixes {
			if top := aws.ToString(p.Prefix); !seen[top] && top != "" && top != "/" {
				seen[top] = true
				tops = append(tops, top)
			}
		}
	}
	return tops, nil
}

// ClearPending removes the pending tag of a movie's file (its movie is
// ready: the lifecycle must not expire it).
func (s *Store) ClearPending(ctx context.Context, movieID string) error {
	key := UploadKey(movieID)
	if _, err := s.client.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: &s.bucket, Key: &key}); err != nil {
		return fmt.Errorf("clear the pending tag of %s: %w", key, err)
	}
	return nil
}

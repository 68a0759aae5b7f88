package s3store

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The key layout of the movies bucket: the uploaded file, and one image per
// frame. Only UploadPrefix notifies the ingest (the CDK stack's filter).
const (
	UploadPrefix = "uploads/"
	FramesPrefix = "frames/"
	// TrackerPrefix holds the tracer's checkpoints:
	// tracker/<movieId>/<settings>/<frame> (tracer.ObjectStates).
	TrackerPrefix = "tracker/"
	// FrameImageType is the frames' format: 8-bit grayscale PNG, the very
	// pixels the tracer reads (lossless).
	FrameImageType = "image/png"
	// PendingTag is the tag every upload carries until the ingest makes its
	// movie ready; the bucket's lifecycle deletes an upload still tagged
	// after a few days (infra/stack/movies.go).
	PendingTag = "upload=pending"
)

// UploadKey is the key of a movie's file.
func UploadKey(movieID string) string { return UploadPrefix + movieID }

// FrameKey is the key of frame n's image.
func FrameKey(movieID string, n int) string {
	return FramesPrefix + movieID + "/" + strconv.Itoa(n) + ".png"
}

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

// FrameCacheControl is the Cache-Control of a frame image as its presigned
// URL serves it (the GET's response-cache-control): a frame image never
// changes once its movie is ingested (a movie is ingested once, and a new
// file is a new movie with a new ID), so a browser may keep it and never
// revalidate.
const FrameCacheControl = "private, max-age=31536000, immutable"

// FrameImageURL presigns the GET of frame n's image, served with
// FrameCacheControl. The signature's time is the clock truncated to
// expires/2, so every request for the frame within that window gets the same
// URL (and a browser its cached image), valid for at least expires/2 after
// it is handed out.
func (s *Store) FrameImageURL(ctx context.Context, movieID string, n int, expires time.Duration) (string, error) {
	key := FrameKey(movieID, n)
	at := s.now().UTC().Truncate(expires / 2)
	req, err := s.presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key, ResponseCacheControl: aws.String(FrameCacheControl)},
		func(o *s3.PresignOptions) {
			o.Expires = expires
			o.Presigner = signedAt{o.Presigner, at}
		})
	if err != nil {
		return "", fmt.Errorf("presign get %s: %w", key, err)
	}
	return req.URL, nil
}

// signedAt presigns as of a fixed time.
type signedAt struct {
	s3.HTTPPresignerV4
	at time.Time
}

func (p signedAt) PresignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request, payloadHash, service, region string,
	_ time.Time, optFns ...func(*v4.SignerOptions)) (string, http.Header, error) {
	return p.HTTPPresignerV4.PresignHTTP(ctx, creds, r, payloadHash, service, region, p.at, optFns...)
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

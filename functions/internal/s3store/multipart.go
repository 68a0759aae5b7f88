package s3store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/movietrace/tracinglocks/domain"
)

// A large movie file is uploaded in parts (S3 multipart upload): the API
// starts it (CreateMultipart), the browser PUTs each part to a presigned
// URL (PresignPart) and keeps the ETag S3 answers, and the API completes it
// with the list of parts (CompleteMultipart), which creates the object and
// its ObjectCreated:CompleteMultipartUpload notification, as one PUT would.
// A part that failed is sent again to a fresh URL; a cancelled upload is
// aborted (AbortMultipart), and the bucket's lifecycle aborts what nobody
// completes or aborts (infra/stack/movies.go).

// CreateMultipart starts the multipart upload of a movie's file, tagged
// pending like a single PUT, and returns its upload ID.
func (s *Store) CreateMultipart(ctx context.Context, movieID, contentType string) (string, error) {
	key := UploadKey(movieID)
	out, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket: &s.bucket, Key: &key, ContentType: &contentType, Tagging: aws.String(PendingTag),
	})
	if err != nil {
		return "", fmt.Errorf("create multipart upload %s: %w", key, err)
	}
	return aws.ToString(out.UploadId), nil
}

// PresignPart presigns the PUT of part n of an upload.
func (s *Store) PresignPart(ctx context.Context, movieID, uploadID string, n int32, expires time.Duration) (string, error) {
	key := UploadKey(movieID)
	req, err := s.presign.PresignUploadPart(ctx, &s3.UploadPartInput{
		Bucket: &s.bucket, Key: &key, UploadId: &uploadID, PartNumber: &n,
	}, s3.WithPresignExpires(expires))
	if err != nil {
		return "", fmt.Errorf("presign part %d of %s: %w", n, key, err)
	}
	return req.URL, nil
}

// CompleteMultipart assembles the parts, in order, into the movie's file,
// only if no file is there yet (If-None-Match: *). An unknown upload ID, or
// parts S3 does not have, are the caller's mistake (domain invalid_input).
func (s *Store) CompleteMultipart(ctx context.Context, movieID, uploadID string, parts []domain.UploadPart) error {
	key := UploadKey(movieID)
	done := make([]s3types.CompletedPart, len(parts))
	for i, p := range parts {
		// S3 compares ETags with their quotes stripped; sent without them,
		// they survive XML escaping (fauxqs 1.9.2 does not unescape the
		// SDK's &#34; and would refuse every part).
		done[i] = s3types.CompletedPart{PartNumber: aws.Int32(p.Number), ETag: aws.String(strings.Trim(p.ETag, `"`))}
	}
	_, err := s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: &s.bucket, Key: &key, UploadId: &uploadID, IfNoneMatch: aws.String("*"),
		MultipartUpload: &s3types.CompletedMultipartUpload{Parts: done},
	})
	if err != nil {
		err = multipartError(key, "complete", err)
		if errors.Is(err, errNoSuchUpload) || domain.ErrorCode(err) == domain.CodeNotAwaitingUpload {
			// A retry whose first answer was lost finds the upload gone
			// (or the object there, 412): the file is in place, done (the
			// ingest checks its size against the announced one).
			if _, herr := s.Head(ctx, key); herr == nil {
				return nil
			}
		}
		return err
	}
	return nil
}

// AbortMultipart discards an upload's parts; an upload already gone is
// success.
func (s *Store) AbortMultipart(ctx context.Context, movieID, uploadID string) error {
	key := UploadKey(movieID)
	_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: &key, UploadId: &uploadID})
	if err != nil {
		if errors.Is(multipartError(key, "abort", err), errNoSuchUpload) {
			return nil
		}
		return multipartError(key, "abort", err)
	}
	return nil
}

var errNoSuchUpload = errors.New("no such upload")

// multipartError maps S3's refusals of the client's input to the domain's
// vocabulary; anything else is S3's failure.
func multipartError(key, op string, err error) error {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "NoSuchUpload":
			return fmt.Errorf("%w: %w", domain.Invalid("uploadId", "no upload in progress has this ID (it was completed, aborted or expired)"), errNoSuchUpload)
		case "InvalidPart", "InvalidPartOrder", "EntityTooSmall":
			return domain.Invalid("parts", "the parts do not match what was uploaded (%s)", api.ErrorCode())
		case "PreconditionFailed":
			return &domain.Error{Code: domain.CodeNotAwaitingUpload, Message: "This movie's file was already received; a new file needs a new movie."}
		}
	}
	return fmt.Errorf("%s multipart upload %s: %w", op, key, err)
}

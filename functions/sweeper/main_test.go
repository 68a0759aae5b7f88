package main

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/testkit/awscount"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/schema"
)

// TestSweeperOperationsAreListed runs one sweep of the sweeper as build()
// wires it for Lambda, against the emulators with a request counter on its
// AWS clients: a stale trace is finalised, an expired upload expires and
// its late file is deleted. testdata/aws-operations.txt must list exactly
// the operations it sent (infra/stack's TestFunctionCallsAreAllowed
// checks them against the sweeper role's grants).
func TestSweeperOperationsAreListed(t *testing.T) {
	ddb, s3c := testenv.DynamoDB(t), testenv.S3(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	tables := testenv.NewTables(t, ddb)
	bucket := strings.ReplaceAll(strings.ToLower(testenv.UniqueName(t, "sweep-ops")), "_", "-")
	bucket = strings.Trim(bucket[:min(len(bucket), 63)], "-")
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	store := dynamo.NewMovieStore(ddb, tables.Movies)
	now := time.Now()
	stale, err := domain.NewMovie("sweep-stale", "Stale", 300, 25, now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	stale.Settings.Markers = []domain.Marker{{ID: "m1", Label: "tip", X: 0.5, Y: 0.5}}
	if err := store.Create(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Commit(ctx, stale.ID, domain.StartTrace{JobID: token.New(), User: domain.User{ID: "u1", Name: "U"},
		Now: now.Add(-time.Hour), Duration: time.Minute}); err != nil {
		t.Fatal(err)
	}
	up := domain.CreateMovie{ID: "sweep-upload", Title: "Late", MaxBytes: 1 << 20, Now: now.Add(-2 * time.Hour),
		Upload: domain.Upload{FileName: "a.mp4", ContentType: "video/mp4", SizeBytes: 10, ExpiresAt: now.Add(-time.Hour)}}
	if err := store.Create(ctx, up.Movie()); err != nil {
		t.Fatal(err)
	}
	if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(s3store.UploadKey(up.ID)), Body: strings.NewReader("late")}); err != nil {
		t.Fatal(err)
	}

	// A movie deleted long enough ago: its objects (under any prefix),
	// frames and row go.
	gone, err := domain.NewMovie("sweep-deleted", "Deleted", 300, 25, now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Create(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Commit(ctx, gone.ID, domain.DeleteMovie{Now: now.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{s3store.UploadKey(gone.ID), s3store.FrameKey(gone.ID, 3), "renditions/" + gone.ID + "/720p.mp4"} {
		if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(key), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
	}
	frame, err := schema.MarshalFrame(gone.ID, domain.Frame{Index: 3, JobID: token.New()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &tables.Frames, Item: frame}); err != nil {
		t.Fatal(err)
	}

	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	cfg := config.Config{Tables: config.Tables{Movies: tables.Movies, Frames: tables.Frames}, MoviesBucket: bucket,
		DynamoDBEndpoint: os.Getenv("DYNAMODB_ENDPOINT"), S3Endpoint: os.Getenv("S3_ENDPOINT")}
	counter := awscount.Named(map[string]string{envvar.MoviesTable: tables.Movies, envvar.FramesTable: tables.Frames, envvar.MoviesBucket: bucket})
	sw, err := build(ctx, cfg, slog.New(slog.DiscardHandler), func(c *aws.Config) { c.APIOptions = append(c.APIOptions, counter.APIOption) })
	if err != nil {
		t.Fatal(err)
	}
	rep, err := sw.Sweep(ctx)
	if err != nil || rep.Failed != 0 {
		t.Fatalf("sweep: %+v, %v", rep, err)
	}
	for id, want := range map[string]domain.Status{stale.ID: domain.StatusFailed, up.ID: domain.StatusIngestFailed} {
		if m, err := store.Get(ctx, id); err != nil || m.Status != want {
			t.Fatalf("%s after the sweep: %+v, %v; want %s", id, m.Status, err, want)
		}
	}

	if _, err := store.Get(ctx, gone.ID); domain.ErrorCode(err) != domain.CodeNotFound {
		t.Fatalf("the deleted movie's row after the sweep: %v", err)
	}
	if out, err := s3c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket}); err != nil || len(out.Contents) != 0 {
		t.Fatalf("objects left after the sweep: %v", err)
	}

	unlisted, unseen, err := counter.CompareWithList("testdata/aws-operations.txt")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("calls sent: %v", counter.Calls())
	if len(unlisted)+len(unseen) > 0 {
		t.Errorf("sent but not listed in testdata/aws-operations.txt: %v; listed but not sent: %v", unlisted, unseen)
	}
}

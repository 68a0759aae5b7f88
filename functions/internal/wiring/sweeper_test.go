package wiring

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/sweeper"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// TestSweeperExpiresUploads: the sweeper as the Lambda and the local stack
// wire it, on DynamoDB Local and the S3 emulator. One sweep turns a movie
// whose upload expired into ingest_failed (the expired-upload summary) and
// deletes the file that arrived too late; a fresh upload and its file are
// untouched. A second sweep does nothing.
func TestSweeperExpiresUploads(t *testing.T) {
	ctx := t.Context()
	ddb := testenv.DynamoDB(t)
	tables := testenv.NewTables(t, ddb)
	bucket := strings.ToLower(strings.ReplaceAll(testenv.UniqueName(t, "movies"), "_", "-"))
	client := testenv.S3(t)
	if err := s3store.CreateBucket(ctx, client, bucket, "", s3store.UploadPrefix); err != nil {
		t.Fatal(err)
	}
	files, err := s3store.New(s3store.Options{Client: client, Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	store := dynamo.NewMovieStore(ddb, tables.Movies)
	now := time.Now()
	mk := func(id string, expires time.Time) {
		c := domain.CreateMovie{ID: id, Title: id, MaxBytes: 1 << 20, Now: now.Add(-2 * time.Hour),
			Upload: domain.Upload{FileName: "a.mp4", ContentType: "video/mp4", SizeBytes: 4, ExpiresAt: expires}}
		if err := store.Create(ctx, c.Movie()); err != nil {
			t.Fatal(err)
		}
		if err := files.Put(ctx, s3store.UploadKey(id), "video/mp4", []byte("late")); err != nil {
			t.Fatal(err)
		}
	}
	mk("expired", now.Add(-time.Minute))
	mk("fresh", now.Add(time.Hour))

	cfg := config.Config{Tables: config.Tables(tables)}
	s, err := Sweeper(cfg, awsclients.Clients{DynamoDB: ddb}, slog.New(slog.DiscardHandler), files, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := s.Sweep(ctx); err != nil || rep != (sweeper.Report{Movies: 2, Finalized: 1}) {
		t.Fatalf("%+v %v", rep, err)
	}
	if m, err := store.Get(ctx, "expired"); err != nil || m.Status != domain.StatusIngestFailed ||
		m.IngestFailure != domain.ExpiredUploadSummary {
		t.Fatalf("expired after the sweep: %+v %v", m, err)
	}
	if _, err := files.Get(ctx, s3store.UploadKey("expired")); err == nil {
		t.Fatal("the late file of the expired movie is still there")
	}
	if m, err := store.Get(ctx, "fresh"); err != nil || m.Status != domain.StatusAwaitingUpload || m.Version != 1 {
		t.Fatalf("fresh after the sweep: %+v %v", m, err)
	}
	if _, err := files.Get(ctx, s3store.UploadKey("fresh")); err != nil {
		t.Fatalf("the fresh upload's file: %v", err)
	}
	if rep, err := s.Sweep(ctx); err != nil || rep.Finalized != 0 || rep.Failed != 0 {
		t.Fatalf("second sweep %+v %v", rep, err)
	}
}

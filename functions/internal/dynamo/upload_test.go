package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// The upload lifecycle on DynamoDB Local: create awaiting the upload; the
// ingest's conditional write makes it ready exactly once (a redelivery is
// refused with not_awaiting_upload and changes nothing); an expired upload
// becomes ingest_failed; deleting is refused under a live lease and removes
// the row otherwise.
func TestUploadLifecycleAgainstDynamoDBLocal(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := context.Background()
	create := domain.CreateMovie{ID: "up1", Title: "Zebrafish 🐟 run", MaxBytes: 1 << 30, Now: t0,
		Upload: domain.Upload{FileName: "run 1.mp4", ContentType: "video/mp4", SizeBytes: 1234, ExpiresAt: t0.Add(time.Hour)}}
	if err := create.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, create.Movie()); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "up1")
	if err != nil || got.Status != domain.StatusAwaitingUpload || got.Upload == nil || got.Upload.FileName != "run 1.mp4" ||
		!got.Upload.ExpiresAt.Equal(t0.Add(time.Hour)) || got.Title != create.Title {
		t.Fatalf("created: %+v, %v", got, err)
	}
	refused(t, s, "up1", domain.OpenAnalysis{LeaseID: newID(t), User: alice, Now: t0, Duration: lease}, domain.CodeMovieNotReady)
	refused(t, s, "up1", domain.ExpireUpload{Now: t0.Add(time.Minute)}, domain.CodeInvalid)

	ready := domain.CompleteIngest{FrameCount: 240, FrameRate: 24, Now: t0.Add(time.Minute),
		Video: domain.Video{Width: 320, Height: 240, Codec: "h264", DurationSeconds: 10}}
	m := apply(t, s, "up1", ready)
	if m.Status != domain.StatusReady || m.FrameCount != 240 || m.FrameRate != 24 || m.Video == nil || *m.Video != ready.Video ||
		m.Settings.Trim != (domain.Trim{Start: 0, End: 240}) || m.Settings.CaptureInterval != 1 || m.Version != 2 {
		t.Fatalf("ready: %+v video %+v", m, m.Video)
	}
	refused(t, s, "up1", ready, domain.CodeNotAwaitingUpload)
	refused(t, s, "up1", domain.FailIngest{Summary: "not a video", Now: t0}, domain.CodeNotAwaitingUpload)
	if again, _ := s.Get(ctx, "up1"); again.Version != 2 {
		t.Fatalf("a refused redelivery changed the row: version %d", again.Version)
	}

	// Deleting under a live lease is refused with the holder.
	a := newID(t)
	apply(t, s, "up1", domain.OpenAnalysis{LeaseID: a, User: alice, Now: t0.Add(2 * time.Minute), Duration: lease})
	if _, err := s.Delete(ctx, "up1", domain.DeleteMovie{Now: t0.Add(2 * time.Minute)}); domain.ErrorCode(err) != domain.CodeLeaseHeld {
		t.Fatalf("delete under a lease: %v", err)
	} else if e, _ := domain.AsError(err); e.Holder == nil || e.Holder.UserName != "Alice" {
		t.Fatalf("holder: %+v", e)
	}
	// Once it is stale, the delete goes through.
	deleted, err := s.Delete(ctx, "up1", domain.DeleteMovie{Now: t0.Add(2*time.Minute + lease)})
	if err != nil || deleted.ID != "up1" {
		t.Fatalf("delete: %+v, %v", deleted, err)
	}
	if _, err := s.Get(ctx, "up1"); domain.ErrorCode(err) != domain.CodeNotFound {
		t.Fatalf("after delete: %v", err)
	}
	if _, err := s.Delete(ctx, "up1", domain.DeleteMovie{Now: t0}); domain.ErrorCode(err) != domain.CodeNotFound {
		t.Fatalf("second delete: %v", err)
	}
	// The ingest of a deleted movie is refused as not found.
	refused(t, s, "up1", ready, domain.CodeNotFound)

	// An upload that never arrives expires.
	create.ID = "up2"
	if err := s.Create(ctx, create.Movie()); err != nil {
		t.Fatal(err)
	}
	m = apply(t, s, "up2", domain.ExpireUpload{Now: t0.Add(time.Hour)})
	if m.Status != domain.StatusIngestFailed || m.IngestFailure != domain.ExpiredUploadSummary {
		t.Fatalf("expired: %+v", m)
	}
	expire, fresh := domain.ExpireUpload{Now: t0.Add(time.Hour)}, create.Movie()
	if domain.Decide(expire, &fresh) != nil || domain.Decide(expire, &m) == nil {
		t.Fatal("ExpireUpload's precondition disagrees with the store")
	}
}

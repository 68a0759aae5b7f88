package domain

import (
	"testing"
	"time"
)

// TestExpireUpload: an upload expires only while the movie awaits it, once
// its expiry has passed, and never once its ingest began (PrepareFrames
// recorded a first range, even of no frames): the proof suite's lifecycle
// histories found the sweeper expiring ingests that had begun (issue 21).
func TestExpireUpload(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	create := CreateMovie{ID: "m1", Title: "Clip", MaxBytes: 100, Now: t0,
		Upload: Upload{FileName: "a.mp4", ContentType: "video/mp4", SizeBytes: 10, ExpiresAt: t0.Add(time.Minute)}}
	fresh := create.Movie()
	begun, err := Execute(&fresh, PrepareFrames{From: 0, To: 0, Total: 40, Now: t0.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	halfway, err := Execute(&begun, PrepareFrames{From: 0, To: 20, Total: 40, Now: t0.Add(2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	late, early := t0.Add(2*time.Minute), t0.Add(30*time.Second)
	for _, tc := range []struct {
		name string
		m    Movie
		now  time.Time
		want Code // "" expires
	}{
		{"overdue, nothing arrived", fresh, late, ""},
		{"at its expiry", fresh, t0.Add(time.Minute), ""},
		{"not yet overdue", fresh, early, CodeInvalid},
		{"ingest begun (no frames yet)", begun, late, CodeNotAwaitingUpload},
		{"ingest halfway", halfway, late, CodeNotAwaitingUpload},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			next, err := Execute(&m, ExpireUpload{Now: tc.now})
			if got := ErrorCode(err); got != tc.want {
				t.Fatalf("code %q (%v), want %q", got, err, tc.want)
			}
			if tc.want == "" && (next.Status != StatusIngestFailed || next.IngestFailure != ExpiredUploadSummary) {
				t.Fatalf("expired row %+v", next)
			}
			if tc.want != "" && next.Version != m.Version {
				t.Fatalf("a refusal changed the row: %+v", next)
			}
		})
	}
	if IngestBegun(fresh) || !IngestBegun(begun) || !IngestBegun(halfway) {
		t.Fatal("IngestBegun disagrees with the precondition")
	}
}

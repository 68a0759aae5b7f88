package domain

import (
	"testing"
	"time"
)

// Issue 20 item 2: deleting is a command that answers at once and is its
// own replay; a deleting movie can be neither opened nor deleted "again"
// into an error, and a stale tracing lease goes with it.
func TestDeleteMovieMarksDeletingAndIsIdempotent(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	m, err := NewMovie("mv-1", "M", 300, 25, t0)
	if err != nil {
		t.Fatal(err)
	}
	m.Settings.Markers = []Marker{{ID: "m1", Label: "tip", X: 0.5, Y: 0.5}}
	job := "0123456789abcdef0123456789abcdef"
	m, err = Execute(&m, StartTrace{JobID: job, User: User{ID: "u1", Name: "U"}, Now: t0, Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// Refused while the tracing lease is live, with its holder.
	if _, err := Execute(&m, DeleteMovie{Now: t0.Add(time.Second)}); ErrorCode(err) != CodeTracingInProgress {
		t.Fatalf("delete under a live trace: %v", err)
	}
	later := t0.Add(2 * time.Minute)
	d, err := Execute(&m, DeleteMovie{Now: later})
	if err != nil || d.Status != StatusDeleting || d.Lease != nil || d.Version != m.Version+1 {
		t.Fatalf("delete over a stale lease: %v, %s, %+v", err, d.Status, d.Lease)
	}
	// A second delete (a lost answer's retry, or another user) is the same
	// success and changes nothing.
	again, err := Execute(&d, DeleteMovie{Now: later.Add(time.Second)})
	if err != nil || again.Version != d.Version || !Replayed(DeleteMovie{Now: later}, &d) {
		t.Fatalf("second delete: %v, version %d", err, again.Version)
	}
	if _, err := Execute(&d, OpenAnalysis{LeaseID: "fedcba9876543210fedcba9876543210", User: User{ID: "u2", Name: "V"}, Now: later, Duration: time.Minute}); ErrorCode(err) != CodeMovieNotReady {
		t.Fatalf("open a deleting movie: %v", err)
	}
	if err := Decide(PurgeMovie{}, &d); err != nil {
		t.Fatalf("purge a deleting movie: %v", err)
	}
	if err := Decide(PurgeMovie{}, &m); err == nil {
		t.Fatal("purge of a movie that is not deleting was accepted")
	}
}

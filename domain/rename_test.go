package domain

import (
	"errors"
	"testing"
	"time"
)

func TestRenameMovie(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	live := func(kind LeaseKind, user string) *Lease {
		return &Lease{Kind: kind, ID: "l-1", UserID: user, UserName: user, HeartbeatAt: now, ExpiresAt: now.Add(time.Minute)}
	}
	stale := live(LeaseAnalysis, "bob")
	stale.ExpiresAt = now.Add(-time.Second)
	cases := []struct {
		name   string
		lease  *Lease
		status Status // StatusReady when empty
		cmd    RenameMovie
		code   Code // "" when it applies
	}{
		{"free", nil, "", RenameMovie{UserID: "alice", Title: "Trial 2", Now: now}, ""},
		{"own editing", live(LeaseAnalysis, "alice"), "", RenameMovie{UserID: "alice", Title: "Trial 2", Now: now}, ""},
		{"stale lease of another", stale, "", RenameMovie{UserID: "alice", Title: "Trial 2", Now: now}, ""},
		{"another editing", live(LeaseAnalysis, "bob"), "", RenameMovie{UserID: "alice", Title: "Trial 2", Now: now}, CodeLeaseHeld},
		{"own trace", live(LeaseTracing, "alice"), "", RenameMovie{UserID: "alice", Title: "Trial 2", Now: now}, CodeTracingInProgress},
		{"empty title", nil, "", RenameMovie{UserID: "alice", Title: "", Now: now}, CodeInvalid},
		{"spaces around", nil, "", RenameMovie{UserID: "alice", Title: " x ", Now: now}, CodeInvalid},
		{"control character", nil, "", RenameMovie{UserID: "alice", Title: "a\u202eb", Now: now}, CodeInvalid},
		{"no user", nil, "", RenameMovie{Title: "x", Now: now}, CodeInvalid},
		{"deleting", nil, StatusDeleting, RenameMovie{UserID: "alice", Title: "Trial 2", Now: now}, CodeNotFound},
		{"awaiting its upload", nil, StatusAwaitingUpload, RenameMovie{UserID: "alice", Title: "Trial 2", Now: now}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status := c.status
			if status == "" {
				status = StatusReady
			}
			m := Movie{ID: "m1", Title: "Trial 1", Status: status, FrameCount: 10, Lease: c.lease, Version: 3,
				Settings: Settings{Markers: []Marker{}, Trim: Trim{End: 10}, CaptureInterval: 1}}
			got, err := Execute(&m, c.cmd)
			if c.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got.Title != c.cmd.Title || got.Version != 4 || !got.UpdatedAt.Equal(now) {
					t.Fatalf("title %q version %d updated %v", got.Title, got.Version, got.UpdatedAt)
				}
				return
			}
			var de *Error
			if !errors.As(err, &de) || de.Code != c.code {
				t.Fatalf("err %v, want %s", err, c.code)
			}
			if got.Title != "Trial 1" || got.Version != 3 {
				t.Fatalf("a refused rename changed the movie: %q v%d", got.Title, got.Version)
			}
		})
	}
}

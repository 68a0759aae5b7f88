package domain_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// holderWant says what a refusal must reveal about the live lease.
type holderWant int

const (
	anyHolder    holderWant = iota // not checked
	storedHolder                   // the holder of the movie's stored lease
	noHolder                       // nobody: there is no live lease
)

// cmdCase is one rule of a command: the movie as stored, the command, and
// either the refusal (code, field, holder) or a check of the next movie.
type cmdCase struct {
	name   string
	movie  domain.Movie
	cmd    domain.Command
	code   domain.Code // "" when the command is accepted
	field  string      // for refusals naming a field
	holder holderWant
	// replay: accepted as already done (see domain.Replayable): no error,
	// the movie unchanged.
	replay bool
	check  func(t *testing.T, before, after domain.Movie)
}

// runCases runs each case through Execute and checks what every transition
// owes: the input movie is never mutated; a refusal returns the movie
// unchanged; an acceptance bumps Version by exactly one and stamps UpdatedAt
// with the command's Now.
func runCases(t *testing.T, cases []cmdCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := CloneMovie(tc.movie)
			in := tc.movie
			next, err := domain.Execute(&in, tc.cmd)
			RequireSameMovie(t, in, before)
			if tc.code != "" {
				if err == nil {
					t.Fatalf("accepted (next %s), want refusal %s", describe(next), tc.code)
				}
				e := RequireCode(t, err, tc.code, tc.field)
				RequireSameMovie(t, next, before)
				switch tc.holder {
				case storedHolder:
					RequireHolder(t, e, before.Lease)
				case noHolder:
					if e.Holder != nil {
						t.Fatalf("refusal names holder %+v, want none", *e.Holder)
					}
				}
				if tc.check != nil {
					tc.check(t, before, next)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.replay {
				RequireSameMovie(t, next, before)
				if tc.check != nil {
					tc.check(t, before, next)
				}
				return
			}
			if next.Version != before.Version+1 {
				t.Fatalf("Version %d -> %d, want +1", before.Version, next.Version)
			}
			if now := commandNow(tc.cmd); !next.UpdatedAt.Equal(now) {
				t.Fatalf("UpdatedAt = %v, want the command's Now %v", next.UpdatedAt, now)
			}
			if tc.check != nil {
				tc.check(t, before, next)
			}
		})
	}
}

// commandNow reads the Now every command carries (promoted from JobFence for
// BeginTrace and RenewJob).
func commandNow(c domain.Command) time.Time {
	return reflect.ValueOf(c).FieldByName("Now").Interface().(time.Time)
}

// requireLease fails unless the movie's stored lease has this shape.
func requireLease(t *testing.T, m domain.Movie, kind domain.LeaseKind, id string, u domain.User, acquired, heartbeat time.Time, dur time.Duration) {
	t.Helper()
	l := m.Lease
	if l == nil {
		t.Fatalf("no lease, want %s lease %s", kind, id)
	}
	switch {
	case l.Kind != kind, l.ID != id:
		t.Fatalf("lease is %s %s, want %s %s", l.Kind, l.ID, kind, id)
	case l.UserID != u.ID, l.UserName != u.Name:
		t.Fatalf("lease held by %s (%s), want %s (%s)", l.UserID, l.UserName, u.ID, u.Name)
	case !l.AcquiredAt.Equal(acquired):
		t.Fatalf("AcquiredAt = %v, want %v", l.AcquiredAt, acquired)
	case !l.HeartbeatAt.Equal(heartbeat):
		t.Fatalf("HeartbeatAt = %v, want %v", l.HeartbeatAt, heartbeat)
	case !l.ExpiresAt.Equal(heartbeat.Add(dur)):
		t.Fatalf("ExpiresAt = %v, want %v", l.ExpiresAt, heartbeat.Add(dur))
	}
}

func requireNoLease(t *testing.T, m domain.Movie) {
	t.Helper()
	if m.Lease != nil {
		t.Fatalf("lease %+v remains, want none", *m.Lease)
	}
}

func requireStatus(t *testing.T, m domain.Movie, want domain.Status) {
	t.Helper()
	if m.Status != want {
		t.Fatalf("status %s, want %s", m.Status, want)
	}
}

// leaseUnchanged checks that the stored lease survived as it was.
func leaseUnchanged(t *testing.T, before, after domain.Movie) {
	t.Helper()
	// An accepted edit records the holder's activity (EditedAt) at its
	// time; nothing else of the lease changes.
	if before.Lease != nil && after.Lease != nil && !after.Lease.EditedAt.Equal(before.Lease.EditedAt) {
		if !after.Lease.EditedAt.Equal(after.UpdatedAt) {
			t.Fatalf("lease EditedAt %v, want the edit's time %v", after.Lease.EditedAt, after.UpdatedAt)
		}
		b, a := *before.Lease, *after.Lease
		b.EditedAt, a.EditedAt = time.Time{}, time.Time{}
		before.Lease, after.Lease = &b, &a
	}
	if !reflect.DeepEqual(before.Lease, after.Lease) {
		t.Fatalf("lease changed from %+v to %+v", before.Lease, after.Lease)
	}
}

// with applies edits to a copy of m without going through a command, for
// stored states no command sequence reaches quickly (a lease of any kind at
// any time, a dirty CleanBefore).
func with(m domain.Movie, edits ...func(*domain.Movie)) domain.Movie {
	m = CloneMovie(m)
	for _, e := range edits {
		e(&m)
	}
	return m
}

func cleanBefore(n int) func(*domain.Movie) { return func(m *domain.Movie) { m.CleanBefore = n } }

func noMarkers(m *domain.Movie) { m.Settings.Markers = []domain.Marker{} }

func trimmed(start, end int) func(*domain.Movie) {
	return func(m *domain.Movie) { m.Settings.Trim = domain.Trim{Start: start, End: end} }
}

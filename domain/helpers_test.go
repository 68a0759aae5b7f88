package domain_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// Fixed fixtures shared by the table tests. Every time is derived from t0, so
// a failing case prints times that are easy to read.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	d  = domain.DefaultLeaseDuration
	ms = time.Millisecond

	leaseA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" // Alice's first browser
	leaseC = "cccccccccccccccccccccccccccccccc" // Alice's second browser
	leaseB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" // Bob's browser
	job1   = "0123456789abcdef0123456789abcdef"
	job2   = "fedcba9876543210fedcba9876543210"
)

var (
	alice = domain.User{ID: "u-alice", Name: "Alice Liddell"}
	bob   = domain.User{ID: "u-bob", Name: "Bob Marley"}
)

// TB is the part of testing.TB that *rapid.T also has, so helpers serve
// both table tests and property tests.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// at returns t0 plus the offset.
func at(offset time.Duration) time.Time { return t0.Add(offset) }

// newMovie is a fresh 1000-frame movie created at t0.
func newMovie(tb testing.TB) domain.Movie {
	tb.Helper()
	m, err := domain.NewMovie("m1", "Bicycle race", 1000, 25, t0)
	if err != nil {
		tb.Fatalf("NewMovie: %v", err)
	}
	return m
}

// exec runs c and fails the test on a refusal.
func exec(tb testing.TB, m domain.Movie, c domain.Command) domain.Movie {
	tb.Helper()
	next, err := domain.Execute(&m, c)
	if err != nil {
		tb.Fatalf("%T refused: %v", c, err)
	}
	return next
}

// analysing is a fresh movie whose analysis lease id is held by user since
// the given time, with one marker placed.
func analysing(tb testing.TB, id string, u domain.User, since time.Time) domain.Movie {
	tb.Helper()
	m := newMovie(tb)
	m = exec(tb, m, domain.OpenAnalysis{LeaseID: id, User: u, Now: since, Duration: d})
	return exec(tb, m, domain.EditMarkers{LeaseID: id, Now: since, Markers: []domain.Marker{{ID: "m1", Label: "rider", X: 0.5, Y: 0.5}}})
}

// tracing is a movie on which Alice started job (from frame 0) at since,
// through her analysis lease.
func tracing(tb testing.TB, job string, since time.Time) domain.Movie {
	tb.Helper()
	m := analysing(tb, leaseA, alice, since)
	return exec(tb, m, domain.StartTrace{LeaseID: leaseA, JobID: job, User: alice, FromFrame: 0, Now: since, Duration: d})
}

// claimed is tracing(job, since) claimed by a worker at since.
func claimed(tb testing.TB, job string, since time.Time) domain.Movie {
	tb.Helper()
	return exec(tb, tracing(tb, job, since), domain.ClaimSegment{JobID: job, Now: since, Duration: d})
}

// CloneMovie returns a deep copy of m, so a test can prove that a transition
// did not mutate the movie it was given.
func CloneMovie(m domain.Movie) domain.Movie {
	if m.Lease != nil {
		l := *m.Lease
		m.Lease = &l
	}
	if m.LastJob != nil {
		j := *m.LastJob
		m.LastJob = &j
	}
	if m.Settings.Markers != nil {
		m.Settings.Markers = slices.Clone(m.Settings.Markers)
	}
	if m.Settings.Keys != nil {
		m.Settings.Keys = slices.Clone(m.Settings.Keys)
	}
	if m.Calibration != nil {
		c := *m.Calibration
		m.Calibration = &c
	}
	return m
}

// RequireCode fails unless err is a domain refusal with the code (and, when
// field is not empty, naming that field). It returns the refusal.
func RequireCode(tb TB, err error, code domain.Code, field string) *domain.Error {
	tb.Helper()
	e, ok := domain.AsError(err)
	if !ok {
		tb.Fatalf("got error %v (%T), want a refusal %s", err, err, code)
	}
	if e.Code != code {
		tb.Fatalf("got refusal %v, want code %s", e, code)
	}
	if field != "" && e.Field != field {
		tb.Fatalf("got refusal %v naming field %q, want field %q", e, e.Field, field)
	}
	return e
}

// RequireHolder fails unless the refusal names the holder of lease l.
func RequireHolder(tb TB, e *domain.Error, l *domain.Lease) {
	tb.Helper()
	if e.Holder == nil {
		tb.Fatalf("refusal %v names no holder, want %s (%s)", e, l.UserName, l.Kind)
	}
	want := domain.Holder{Kind: l.Kind, UserID: l.UserID, UserName: l.UserName, StartedAt: l.AcquiredAt}
	if *e.Holder != want {
		tb.Fatalf("refusal names holder %+v, want %+v", *e.Holder, want)
	}
	if strings.Contains(e.Error(), l.ID) {
		tb.Fatalf("refusal text %q leaks the holder's lease ID", e.Error())
	}
}

// RequireSameMovie fails unless got and want are deeply equal.
func RequireSameMovie(tb TB, got, want domain.Movie) {
	tb.Helper()
	if !reflect.DeepEqual(got, want) {
		tb.Fatalf("movie changed:\n got %s\nwant %s", describe(got), describe(want))
	}
}

func describe(m domain.Movie) string {
	s := fmt.Sprintf("%+v", m)
	if m.Lease != nil {
		s += fmt.Sprintf(" lease=%+v", *m.Lease)
	}
	if m.LastJob != nil {
		s += fmt.Sprintf(" lastJob=%+v", *m.LastJob)
	}
	return s
}

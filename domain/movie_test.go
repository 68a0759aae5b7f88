package domain_test

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

func TestNewMovie(t *testing.T) {
	t.Run("a new movie is ready, untrimmed, every frame captured, no markers, no lease, version 1", func(t *testing.T) {
		m, err := domain.NewMovie("m1", "Bicycle race", 1000, 25, t0)
		if err != nil {
			t.Fatal(err)
		}
		want := domain.Movie{
			ID: "m1", Title: "Bicycle race", FrameCount: 1000, FrameRate: 25, Status: domain.StatusReady,
			Settings: domain.Settings{Markers: []domain.Marker{}, Trim: domain.Trim{Start: 0, End: 1000}, CaptureInterval: 1},
			Version:  1, UpdatedAt: t0,
		}
		if !reflect.DeepEqual(m, want) {
			t.Fatalf("got %+v\nwant %+v", m, want)
		}
	})
	long := strings.Repeat("a", 65)
	for _, tc := range []struct {
		name   string
		id     string
		title  string
		frames int
		rate   float64
		field  string // "" when accepted
	}{
		{"a 64-character ID is accepted", long[:64], "t", 1, 25, ""},
		{"IDs may contain _ and - after the first character", "a_b-C9", "t", 1, 25, ""},
		{"MaxFrameCount frames and 1000 fps are accepted", "m", "t", domain.MaxFrameCount, 1000, ""},
		{"a MaxTitle-byte title is accepted", "m", strings.Repeat("é", domain.MaxTitle/2), 1, 25, ""},
		{"an empty ID is invalid", "", "t", 1, 25, "id"},
		{"a 65-character ID is invalid", long, "t", 1, 25, "id"},
		{"an ID starting with - is invalid", "-m", "t", 1, 25, "id"},
		{"an ID with a slash is invalid", "a/b", "t", 1, 25, "id"},
		{"an ID with a space is invalid", "a b", "t", 1, 25, "id"},
		{"an ID with a newline is invalid", "m\n", "t", 1, 25, "id"},
		{"an empty title is invalid", "m", "", 1, 25, "title"},
		{"a title over MaxTitle bytes is invalid", "m", strings.Repeat("a", domain.MaxTitle+1), 1, 25, "title"},
		{"zero frames are invalid", "m", "t", 0, 25, "frameCount"},
		{"more than MaxFrameCount frames are invalid", "m", "t", domain.MaxFrameCount + 1, 25, "frameCount"},
		{"a zero frame rate is invalid", "m", "t", 1, 0, "frameRate"},
		{"a negative frame rate is invalid", "m", "t", 1, -25, "frameRate"},
		{"a frame rate over 1000 is invalid", "m", "t", 1, 1000.5, "frameRate"},
		{"a NaN frame rate is invalid", "m", "t", 1, math.NaN(), "frameRate"},
		{"an infinite frame rate is invalid", "m", "t", 1, math.Inf(1), "frameRate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := domain.NewMovie(tc.id, tc.title, tc.frames, tc.rate, t0)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				if m.Settings.Trim.End != tc.frames {
					t.Fatalf("trim %+v", m.Settings.Trim)
				}
				return
			}
			RequireCode(t, err, domain.CodeInvalid, tc.field)
			if !reflect.DeepEqual(m, domain.Movie{}) {
				t.Fatalf("a refused NewMovie returned %+v", m)
			}
		})
	}
}

func TestMovieView(t *testing.T) {
	running := exec(t, claimed(t, job1, t0), domain.RenewJob{JobFence: domain.JobFence{JobID: job1, Now: t0}, Duration: d, FramesWritten: 42})
	t.Run("a live tracing lease reads as tracing with its initiator as the holder", func(t *testing.T) {
		v := running.View(at(d - ms))
		if v.Status != domain.StatusTracing {
			t.Fatalf("status %s", v.Status)
		}
		want := domain.Holder{Kind: domain.LeaseTracing, UserID: alice.ID, UserName: alice.Name, StartedAt: t0}
		if v.Holder == nil || *v.Holder != want {
			t.Fatalf("holder %+v, want %+v", v.Holder, want)
		}
		if v.Progress.FramesWritten != 42 || v.LastJob != nil {
			t.Fatalf("view %+v", v)
		}
	})
	t.Run("stored tracing with a stale tracing lease reads as tracing_failed with StalledSummary", func(t *testing.T) {
		v := running.View(at(d))
		if v.Status != domain.StatusFailed {
			t.Fatalf("status %s, want %s", v.Status, domain.StatusFailed)
		}
		if v.Holder != nil {
			t.Fatalf("a stale lease shows as holder %+v", *v.Holder)
		}
		want := domain.JobRecord{
			JobID: job1, Status: domain.StatusFailed, UserID: alice.ID, UserName: alice.Name,
			FromFrame: 0, StartedAt: t0, FinishedAt: at(d), Frames: 42, FailureSummary: domain.StalledSummary,
		}
		if v.LastJob == nil || !reflect.DeepEqual(*v.LastJob, want) {
			t.Fatalf("LastJob %+v, want %+v", v.LastJob, want)
		}
		if domain.SanitizeSummary(domain.StalledSummary) != domain.StalledSummary {
			t.Fatal("StalledSummary does not pass its own sanitizer")
		}
		if running.Status != domain.StatusTracing || running.LastJob != nil {
			t.Fatal("View changed the stored movie")
		}
	})
	t.Run("a stale tracing lease replaced by an analysis lease still reads as tracing_failed", func(t *testing.T) {
		m := exec(t, running, domain.OpenAnalysis{LeaseID: leaseB, User: bob, Now: at(d), Duration: d})
		v := m.View(at(d + ms))
		// The row no longer holds the abandoned job, so the recorded last job
		// (none here) is shown, never a record of zero values.
		if v.Status != domain.StatusFailed || v.LastJob != m.LastJob {
			t.Fatalf("view %+v", v)
		}
		if v.Holder == nil || v.Holder.Kind != domain.LeaseAnalysis || v.Holder.UserName != bob.Name {
			t.Fatalf("holder %+v, want Bob's analysis lease", v.Holder)
		}
	})
	t.Run("a ready movie with a live analysis lease shows the editor as the holder", func(t *testing.T) {
		m := analysing(t, leaseB, bob, t0)
		v := m.View(at(ms))
		if v.Status != domain.StatusReady || v.Holder == nil || v.Holder.UserName != bob.Name || !v.Holder.StartedAt.Equal(t0) {
			t.Fatalf("view %+v", v)
		}
		if v := m.View(at(d)); v.Holder != nil {
			t.Fatalf("stale analysis lease still shows as holder %+v", *v.Holder)
		}
	})
	t.Run("a completed trace reads as stored", func(t *testing.T) {
		m := exec(t, running, domain.CompleteJob{Job: *running.Lease, Now: at(ms), FramesWritten: 1000})
		v := m.View(at(2 * d))
		if v.Status != domain.StatusTraced || v.LastJob != m.LastJob || v.Holder != nil {
			t.Fatalf("view %+v", v)
		}
	})
}

// TestLeaseIDValidation checks the shape rule on every command that carries a
// lease or job ID: empty is lease_required, anything but 32 lowercase hex
// digits is invalid naming the field.
func TestLeaseIDValidation(t *testing.T) {
	commands := map[string]func(id string) domain.Command{
		"OpenAnalysis": func(id string) domain.Command {
			return domain.OpenAnalysis{LeaseID: id, User: alice, Now: t0, Duration: d}
		},
		"Heartbeat":   func(id string) domain.Command { return domain.Heartbeat{LeaseID: id, Now: t0, Duration: d} },
		"Release":     func(id string) domain.Command { return domain.Release{LeaseID: id, Now: t0} },
		"EditMarkers": func(id string) domain.Command { return domain.EditMarkers{LeaseID: id, Now: t0} },
		"EditTrim": func(id string) domain.Command {
			return domain.EditTrim{LeaseID: id, Now: t0, Trim: domain.Trim{End: 1}}
		},
		"EditCaptureInterval": func(id string) domain.Command { return domain.EditCaptureInterval{LeaseID: id, Now: t0, Interval: 1} },
		"StartTrace.JobID":    func(id string) domain.Command { return domain.StartTrace{JobID: id, User: alice, Now: t0, Duration: d} },
		"ClaimJob":            func(id string) domain.Command { return domain.ClaimSegment{JobID: id, Now: t0, Duration: d} },
		"JobFence":            func(id string) domain.Command { return fenceCommand{domain.JobFence{JobID: id, Now: t0}} },
		"BeginTrace": func(id string) domain.Command {
			return domain.BeginTrace{JobFence: domain.JobFence{JobID: id, Now: t0}, Duration: d}
		},
		"RenewJob": func(id string) domain.Command {
			return domain.RenewJob{JobFence: domain.JobFence{JobID: id, Now: t0}, Duration: d}
		},
		"CompleteJob": func(id string) domain.Command { return domain.CompleteJob{Job: domain.Lease{ID: id}, Now: t0} },
		"FailJob":     func(id string) domain.Command { return domain.FailJob{Job: domain.Lease{ID: id}, Now: t0} },
	}
	field := func(name string) string {
		switch name {
		case "StartTrace.JobID", "ClaimJob", "JobFence", "BeginTrace", "RenewJob", "CompleteJob", "FailJob":
			return "jobId"
		}
		return "leaseId"
	}
	bad := map[string]string{
		"31 hex digits":        leaseA[1:],
		"33 hex digits":        leaseA + "a",
		"uppercase hex":        strings.ToUpper(job1),
		"a non-hex letter":     "g" + leaseA[1:],
		"a UUID with dashes":   "01234567-89ab-cdef-0123-456789abcdef",
		"surrounding spaces":   " " + leaseA[2:] + " ",
		"a trailing newline":   leaseA[1:] + "\n",
		"full-width digits":    strings.Repeat("０", 32),
		"an injected operator": leaseA[:16] + "' OR '1'='1",
	}
	for name, mk := range commands {
		t.Run(name+": an empty ID is lease_required", func(t *testing.T) {
			m := newMovie(t)
			next, err := domain.Execute(&m, mk(""))
			RequireCode(t, err, domain.CodeLeaseRequired, field(name))
			RequireSameMovie(t, next, m)
		})
		for what, id := range bad {
			t.Run(name+": "+what+" is invalid", func(t *testing.T) {
				RequireCode(t, mk(id).Validate(), domain.CodeInvalid, field(name))
			})
		}
		t.Run(name+": 32 lowercase hex digits pass", func(t *testing.T) {
			if err := mk(job1).Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("StartTrace: an empty lease ID is allowed, a malformed one is not", func(t *testing.T) {
		c := domain.StartTrace{JobID: job1, User: alice, Now: t0, Duration: d}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		c.LeaseID = "xyz"
		RequireCode(t, c.Validate(), domain.CodeInvalid, "leaseId")
	})
	t.Run("ValidLeaseID accepts exactly 32 lowercase hex digits", func(t *testing.T) {
		if !domain.ValidLeaseID(job1) || domain.ValidLeaseID("") || domain.ValidLeaseID(strings.ToUpper(job1)) {
			t.Fatal("ValidLeaseID disagrees with the rule")
		}
	})
}

// fenceCommand lets the lease-ID table run JobFence through Execute; its
// Update is never reached by the validation cases.
type fenceCommand struct{ domain.JobFence }

func (fenceCommand) Update() []domain.Assignment { return nil }

func TestValidateUserAndDuration(t *testing.T) {
	long := strings.Repeat("x", 129)
	for _, tc := range []struct {
		name  string
		c     domain.Command
		field string
	}{
		{"OpenAnalysis needs a user ID", domain.OpenAnalysis{LeaseID: leaseA, User: domain.User{Name: "A"}, Now: t0, Duration: d}, "user.id"},
		{"OpenAnalysis needs a user name", domain.OpenAnalysis{LeaseID: leaseA, User: domain.User{ID: "a"}, Now: t0, Duration: d}, "user.name"},
		{"a user ID over 128 bytes is invalid", domain.OpenAnalysis{LeaseID: leaseA, User: domain.User{ID: long, Name: "A"}, Now: t0, Duration: d}, "user.id"},
		{"a user name over 128 bytes is invalid", domain.OpenAnalysis{LeaseID: leaseA, User: domain.User{ID: "a", Name: long}, Now: t0, Duration: d}, "user.name"},
		{"OpenAnalysis needs a positive duration", domain.OpenAnalysis{LeaseID: leaseA, User: alice, Now: t0}, "duration"},
		{"Heartbeat needs a positive duration", domain.Heartbeat{LeaseID: leaseA, Now: t0, Duration: -time.Second}, "duration"},
		{"StartTrace needs a positive duration", domain.StartTrace{JobID: job1, User: alice, Now: t0}, "duration"},
		{"BeginTrace needs a positive duration", domain.BeginTrace{JobFence: domain.JobFence{JobID: job1, Now: t0}}, "duration"},
		{"RenewJob needs a positive duration", domain.RenewJob{JobFence: domain.JobFence{JobID: job1, Now: t0}}, "duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			RequireCode(t, tc.c.Validate(), domain.CodeInvalid, tc.field)
		})
	}
}

func TestExecute(t *testing.T) {
	t.Run("a valid command on a missing movie is not_found", func(t *testing.T) {
		m, err := domain.Execute(nil, domain.Release{LeaseID: leaseA, Now: t0})
		RequireCode(t, err, domain.CodeNotFound, "")
		if !reflect.DeepEqual(m, domain.Movie{}) {
			t.Fatalf("got %+v", m)
		}
	})
	t.Run("an invalid command on a missing movie reports the input, not the movie", func(t *testing.T) {
		_, err := domain.Execute(nil, domain.Release{Now: t0})
		RequireCode(t, err, domain.CodeLeaseRequired, "leaseId")
	})
	t.Run("an invalid command returns the movie unchanged, like every other refusal", func(t *testing.T) {
		m := analysing(t, leaseA, alice, t0)
		next, err := domain.Execute(&m, domain.EditCaptureInterval{LeaseID: leaseA, Now: t0, Interval: 0})
		RequireCode(t, err, domain.CodeInvalid, "captureInterval")
		RequireSameMovie(t, next, m)
	})
}

func TestErrors(t *testing.T) {
	t.Run("a wrapped refusal keeps its code", func(t *testing.T) {
		err := fmt.Errorf("store: %w", domain.Invalid("trim", "bad %d", 3))
		if domain.ErrorCode(err) != domain.CodeInvalid {
			t.Fatalf("code %q", domain.ErrorCode(err))
		}
		e, ok := domain.AsError(err)
		if !ok || e.Field != "trim" || e.Message != "bad 3" {
			t.Fatalf("AsError = %+v, %v", e, ok)
		}
		if got := e.Error(); got != "invalid_input: bad 3 (trim)" {
			t.Fatalf("Error() = %q", got)
		}
	})
	t.Run("an infrastructure error has no code", func(t *testing.T) {
		if c := domain.ErrorCode(errors.New("connection reset")); c != "" {
			t.Fatalf("code %q", c)
		}
		if _, ok := domain.AsError(nil); ok {
			t.Fatal("nil is a refusal")
		}
	})
}

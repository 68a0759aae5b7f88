package domain_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// guardCases are the lease rules every settings edit shares, built for one
// edit by mk(leaseID, now).
func guardCases(t *testing.T, mk func(leaseID string, now time.Time) domain.Command) []cmdCase {
	mine := analysing(t, leaseA, alice, t0)
	return []cmdCase{
		{
			name:   "without any lease the edit is lease_lost",
			movie:  newMovie(t),
			cmd:    mk(leaseA, at(ms)),
			code:   domain.CodeLeaseLost,
			holder: noHolder,
		},
		{
			name:   "with the caller's lease stale (at ExpiresAt) the edit is lease_lost",
			movie:  mine,
			cmd:    mk(leaseA, mine.Lease.ExpiresAt),
			code:   domain.CodeLeaseLost,
			holder: noHolder,
		},
		{
			name:  "1ms before ExpiresAt the caller's lease still grants the edit",
			movie: mine,
			cmd:   mk(leaseA, mine.Lease.ExpiresAt.Add(-ms)),
		},
		{
			name:   "another browser's live lease refuses with lease_held naming its holder",
			movie:  analysing(t, leaseB, bob, t0),
			cmd:    mk(leaseA, at(ms)),
			code:   domain.CodeLeaseHeld,
			holder: storedHolder,
		},
		{
			name:   "the same user's other browser is refused with lease_held",
			movie:  mine,
			cmd:    mk(leaseC, at(ms)),
			code:   domain.CodeLeaseHeld,
			holder: storedHolder,
		},
		{
			name:   "while tracing the edit is refused with tracing_in_progress, even by the page that started it",
			movie:  tracing(t, job1, t0),
			cmd:    mk(leaseA, at(ms)),
			code:   domain.CodeTracingInProgress,
			holder: storedHolder,
		},
		{
			name:   "the job ID is no analysis lease",
			movie:  tracing(t, job1, t0),
			cmd:    mk(job1, at(ms)),
			code:   domain.CodeTracingInProgress,
			holder: storedHolder,
		},
		{
			name:  "with the tracing lease stale, the old analysis lease ID grants nothing",
			movie: tracing(t, job1, t0),
			cmd:   mk(leaseA, at(d)),
			code:  domain.CodeLeaseLost,
		},
		{
			name:  "an empty lease ID is lease_required",
			movie: mine,
			cmd:   mk("", at(ms)),
			code:  domain.CodeLeaseRequired,
			field: "leaseId",
		},
		{
			name:  "a lease ID in capitals is invalid",
			movie: mine,
			cmd:   mk("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", at(ms)),
			code:  domain.CodeInvalid,
			field: "leaseId",
		},
	}
}

var twoMarkers = []domain.Marker{{ID: "m1", Label: "rider", X: 0, Y: 1}, {ID: "m_2-b", Label: "", X: 1, Y: 0}}

func TestEditMarkers(t *testing.T) {
	mine := with(analysing(t, leaseA, alice, t0), cleanBefore(500))
	edit := func(ms []domain.Marker) domain.EditMarkers {
		return domain.EditMarkers{LeaseID: leaseA, Now: at(time.Second), Markers: ms}
	}
	cases := guardCases(t, func(id string, now time.Time) domain.Command {
		return domain.EditMarkers{LeaseID: id, Now: now, Markers: twoMarkers}
	})
	many := make([]domain.Marker, domain.MaxMarkers+1)
	for i := range many {
		many[i] = domain.Marker{ID: "m" + string(rune('a'+i%26)) + string(rune('a'+i/26)), X: 0.5, Y: 0.5}
	}
	long := string(make([]byte, domain.MaxMarkerLabel+1))
	cases = append(cases,
		cmdCase{
			name:  "the holder replaces the markers and CleanBefore is reset: frames of other markers are not results for these",
			movie: mine,
			cmd:   edit(twoMarkers),
			check: func(t *testing.T, before, after domain.Movie) {
				if !reflect.DeepEqual(after.Settings.Markers, twoMarkers) {
					t.Fatalf("markers %+v, want %+v", after.Settings.Markers, twoMarkers)
				}
				if after.CleanBefore != 0 {
					t.Fatalf("CleanBefore %d, want 0", after.CleanBefore)
				}
				leaseUnchanged(t, before, after)
			},
		},
		cmdCase{
			name:  "clearing the markers stores an empty list, never nil",
			movie: mine,
			cmd:   edit(nil),
			check: func(t *testing.T, _, after domain.Movie) {
				if after.Settings.Markers == nil || len(after.Settings.Markers) != 0 {
					t.Fatalf("markers %#v, want an empty non-nil list", after.Settings.Markers)
				}
			},
		},
		cmdCase{
			name:  "exactly MaxMarkers markers are accepted",
			movie: mine,
			cmd:   edit(many[:domain.MaxMarkers]),
		},
		cmdCase{name: "more than MaxMarkers markers are invalid", movie: mine, cmd: edit(many), code: domain.CodeInvalid, field: "markers"},
		cmdCase{name: "a marker without an ID is invalid", movie: mine, cmd: edit([]domain.Marker{{X: 0.5, Y: 0.5}}), code: domain.CodeInvalid, field: "markers.id"},
		cmdCase{name: "a marker ID with a slash is invalid", movie: mine, cmd: edit([]domain.Marker{{ID: "a/b", X: 0.5, Y: 0.5}}), code: domain.CodeInvalid, field: "markers.id"},
		cmdCase{name: "duplicate marker IDs are invalid", movie: mine, cmd: edit([]domain.Marker{{ID: "m1"}, {ID: "m1"}}), code: domain.CodeInvalid, field: "markers.id"},
		cmdCase{name: "a label over MaxMarkerLabel bytes is invalid", movie: mine, cmd: edit([]domain.Marker{{ID: "m1", Label: long}}), code: domain.CodeInvalid, field: "markers.label"},
		cmdCase{name: "x above 1 is invalid", movie: mine, cmd: edit([]domain.Marker{{ID: "m1", X: 1.0001}}), code: domain.CodeInvalid, field: "markers.x"},
		cmdCase{name: "negative y is invalid", movie: mine, cmd: edit([]domain.Marker{{ID: "m1", Y: -0.1}}), code: domain.CodeInvalid, field: "markers.x"},
		cmdCase{name: "NaN coordinates are invalid", movie: mine, cmd: edit([]domain.Marker{{ID: "m1", X: nan()}}), code: domain.CodeInvalid, field: "markers.x"},
	)
	runCases(t, cases)

	t.Run("the stored markers do not alias the command's slice", func(t *testing.T) {
		in := []domain.Marker{{ID: "m1", X: 0.25, Y: 0.25}}
		after := exec(t, mine, edit(in))
		in[0].X = 0.75
		if after.Settings.Markers[0].X != 0.25 {
			t.Fatal("mutating the command's markers changed the movie")
		}
	})
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}

func TestEditTrim(t *testing.T) {
	mine := with(analysing(t, leaseA, alice, t0), cleanBefore(500))
	edit := func(start, end int) domain.EditTrim {
		return domain.EditTrim{LeaseID: leaseA, Now: at(time.Second), Trim: domain.Trim{Start: start, End: end}}
	}
	cases := guardCases(t, func(id string, now time.Time) domain.Command {
		return domain.EditTrim{LeaseID: id, Now: now, Trim: domain.Trim{Start: 10, End: 20}}
	})
	cases = append(cases,
		cmdCase{
			name:  "the holder sets the trim and CleanBefore resets to 0: the capture grid moved",
			movie: mine,
			cmd:   edit(100, 900),
			check: func(t *testing.T, before, after domain.Movie) {
				if after.Settings.Trim != (domain.Trim{Start: 100, End: 900}) {
					t.Fatalf("trim %+v", after.Settings.Trim)
				}
				if after.CleanBefore != 0 {
					t.Fatalf("CleanBefore %d, want 0", after.CleanBefore)
				}
				if !reflect.DeepEqual(after.Settings.Markers, before.Settings.Markers) || after.Settings.CaptureInterval != before.Settings.CaptureInterval {
					t.Fatal("a trim edit changed other settings")
				}
				leaseUnchanged(t, before, after)
			},
		},
		cmdCase{name: "trim.End == FrameCount is accepted", movie: mine, cmd: edit(1, 1000)},
		cmdCase{name: "a one-frame trim is accepted", movie: mine, cmd: edit(999, 1000)},
		cmdCase{name: "trim.End > FrameCount is invalid (trim.end)", movie: mine, cmd: edit(0, 1001), code: domain.CodeInvalid, field: "trim.end"},
		cmdCase{name: "another browser asking for trim.End > FrameCount hears lease_held: the lease guard answers first", movie: analysing(t, leaseB, bob, t0), cmd: edit(0, 1001), code: domain.CodeLeaseHeld, holder: storedHolder},
		cmdCase{name: "a negative start is invalid", movie: mine, cmd: edit(-1, 10), code: domain.CodeInvalid, field: "trim"},
		cmdCase{name: "an empty trim is invalid", movie: mine, cmd: edit(10, 10), code: domain.CodeInvalid, field: "trim"},
		cmdCase{name: "a reversed trim is invalid", movie: mine, cmd: edit(20, 10), code: domain.CodeInvalid, field: "trim"},
		cmdCase{name: "an end beyond MaxFrameCount is invalid input", movie: mine, cmd: edit(0, domain.MaxFrameCount+1), code: domain.CodeInvalid, field: "trim"},
	)
	runCases(t, cases)
}

func TestEditCaptureInterval(t *testing.T) {
	mine := with(analysing(t, leaseA, alice, t0), cleanBefore(500))
	edit := func(n int) domain.EditCaptureInterval {
		return domain.EditCaptureInterval{LeaseID: leaseA, Now: at(time.Second), Interval: n}
	}
	cases := guardCases(t, func(id string, now time.Time) domain.Command {
		return domain.EditCaptureInterval{LeaseID: id, Now: now, Interval: 5}
	})
	cases = append(cases,
		cmdCase{
			name:  "the holder sets the interval and CleanBefore resets to 0: a new grid",
			movie: mine,
			cmd:   edit(5),
			check: func(t *testing.T, before, after domain.Movie) {
				if after.Settings.CaptureInterval != 5 {
					t.Fatalf("interval %d, want 5", after.Settings.CaptureInterval)
				}
				if after.CleanBefore != 0 {
					t.Fatalf("CleanBefore %d, want 0", after.CleanBefore)
				}
				if after.Settings.Trim != before.Settings.Trim {
					t.Fatal("an interval edit changed the trim")
				}
			},
		},
		cmdCase{name: "MaxCaptureInterval is accepted", movie: mine, cmd: edit(domain.MaxCaptureInterval)},
		cmdCase{name: "an interval longer than the trim is accepted (one frame is traced)", movie: mine, cmd: edit(5000)},
		cmdCase{name: "interval 0 is invalid", movie: mine, cmd: edit(0), code: domain.CodeInvalid, field: "captureInterval"},
		cmdCase{name: "a negative interval is invalid", movie: mine, cmd: edit(-3), code: domain.CodeInvalid, field: "captureInterval"},
		cmdCase{name: "an interval above MaxCaptureInterval is invalid", movie: mine, cmd: edit(domain.MaxCaptureInterval + 1), code: domain.CodeInvalid, field: "captureInterval"},
	)
	runCases(t, cases)
}

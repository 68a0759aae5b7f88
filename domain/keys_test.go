package domain_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// correct is the correction of marker m1 on frame f to x, y, resolved
// against base (as CorrectOn does) but built directly, so that the lease
// cases can use any lease ID.
func correct(base domain.Movie, leaseID string, now time.Time, f int, x, y float64) domain.CorrectPoint {
	return domain.CorrectPoint{LeaseID: leaseID, Now: now, Key: domain.Key{MarkerID: "m1", Frame: f, X: x, Y: y},
		Seen: base.Settings, SeenCleanBefore: base.CleanBefore}
}

func TestCorrectPoint(t *testing.T) {
	traced := with(analysing(t, leaseA, alice, t0), cleanBefore(1000))
	cases := guardCases(t, func(id string, now time.Time) domain.Command {
		return correct(analysing(t, leaseA, alice, t0), id, now, 40, 0.25, 0.75)
	})
	keyAt40 := []domain.Key{{MarkerID: "m1", Frame: 40, X: 0.25, Y: 0.75}}
	corrected := exec(t, traced, correct(traced, leaseA, at(time.Second), 40, 0.25, 0.75))
	cases = append(cases,
		cmdCase{
			name:  "the holder's correction becomes a key frame and the frames from it on are no longer clean",
			movie: traced,
			cmd:   correct(traced, leaseA, at(time.Second), 40, 0.25, 0.75),
			check: func(t *testing.T, before, after domain.Movie) {
				if !reflect.DeepEqual(after.Settings.Keys, keyAt40) {
					t.Fatalf("keys %+v, want %+v", after.Settings.Keys, keyAt40)
				}
				if after.CleanBefore != 40 {
					t.Fatalf("CleanBefore %d, want 40: the frames before the key stay clean, the rest are to retrace", after.CleanBefore)
				}
				if !reflect.DeepEqual(after.Settings.Markers, before.Settings.Markers) {
					t.Fatal("a correction changed the markers")
				}
				leaseUnchanged(t, before, after)
			},
		},
		cmdCase{
			name:  "a correction never raises the clean range",
			movie: with(traced, cleanBefore(10)),
			cmd:   correct(with(traced, cleanBefore(10)), leaseA, at(time.Second), 40, 0.25, 0.75),
			check: func(t *testing.T, _, after domain.Movie) {
				if after.CleanBefore != 10 {
					t.Fatalf("CleanBefore %d, want 10", after.CleanBefore)
				}
			},
		},
		cmdCase{
			name:   "the same correction again is a success that writes nothing",
			movie:  corrected,
			cmd:    correct(traced, leaseA, at(2*time.Second), 40, 0.25, 0.75),
			replay: true,
		},
		cmdCase{
			name:  "a second correction of the same marker and frame replaces the first, a later one is added in frame order",
			movie: corrected,
			cmd:   correct(corrected, leaseA, at(2*time.Second), 40, 0.5, 0.5),
			check: func(t *testing.T, _, after domain.Movie) {
				want := []domain.Key{{MarkerID: "m1", Frame: 40, X: 0.5, Y: 0.5}}
				if !reflect.DeepEqual(after.Settings.Keys, want) {
					t.Fatalf("keys %+v, want %+v", after.Settings.Keys, want)
				}
			},
		},
		cmdCase{
			name:  "a correction resolved against other settings is settings_changed and writes nothing",
			movie: corrected,
			cmd:   correct(traced, leaseA, at(2*time.Second), 50, 0.5, 0.5),
			code:  domain.CodeSettingsChanged,
		},
		cmdCase{
			name:  "a marker edit clears the key frames: a new marker with a reused ID inherits no correction",
			movie: corrected,
			cmd: domain.EditMarkers{LeaseID: leaseA, Now: at(2 * time.Second),
				Markers: []domain.Marker{{ID: "m1", Label: "New", X: 0.9, Y: 0.1}}},
			check: func(t *testing.T, _, after domain.Movie) {
				if len(after.Settings.Keys) != 0 {
					t.Fatalf("keys %+v after the markers were replaced, want none", after.Settings.Keys)
				}
			},
		},
		cmdCase{
			name:  "coordinates outside the frame are invalid",
			movie: traced,
			cmd:   correct(traced, leaseA, at(time.Second), 40, 1.5, 0.5),
			code:  domain.CodeInvalid, field: "x",
		},
		cmdCase{
			name:  "a negative frame is invalid",
			movie: traced,
			cmd:   correct(traced, leaseA, at(time.Second), -1, 0.5, 0.5),
			code:  domain.CodeInvalid, field: "frame",
		},
	)
	runCases(t, cases)
}

func TestCorrectOn(t *testing.T) {
	m := with(analysing(t, leaseA, alice, t0), trimmed(10, 100), func(m *domain.Movie) { m.Settings.CaptureInterval = 3 })
	for _, tc := range []struct {
		name  string
		key   domain.Key
		field string
	}{
		{"a traced frame of an existing marker resolves", domain.Key{MarkerID: "m1", Frame: 13, X: 0.5, Y: 0.5}, ""},
		{"an unknown marker is invalid", domain.Key{MarkerID: "nope", Frame: 13, X: 0.5, Y: 0.5}, "markerId"},
		{"a frame off the capture grid is invalid", domain.Key{MarkerID: "m1", Frame: 14, X: 0.5, Y: 0.5}, "frame"},
		{"a frame before the trim is invalid", domain.Key{MarkerID: "m1", Frame: 7, X: 0.5, Y: 0.5}, "frame"},
		{"the trim's end is no traced frame", domain.Key{MarkerID: "m1", Frame: 100, X: 0.5, Y: 0.5}, "frame"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := domain.CorrectOn(m, leaseA, alice.ID, at(time.Second), tc.key)
			if tc.field != "" {
				RequireCode(t, err, domain.CodeInvalid, tc.field)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			after := exec(t, m, c)
			if len(after.Settings.Keys) != 1 || after.Settings.Keys[0] != tc.key {
				t.Fatalf("keys %+v", after.Settings.Keys)
			}
		})
	}
}

func TestMarkerKeys(t *testing.T) {
	s := domain.Settings{
		Markers: []domain.Marker{{ID: "a", X: 0.1, Y: 0.1, Frame: 5}, {ID: "b", X: 0.2, Y: 0.2}},
		Keys: []domain.Key{
			{MarkerID: "a", Frame: 5, X: 0.3, Y: 0.3}, {MarkerID: "b", Frame: 7, X: 0.4, Y: 0.4}, {MarkerID: "a", Frame: 9, X: 0.5, Y: 0.5},
		},
	}
	got := domain.MarkerKeys(s, s.Markers[0])
	want := []domain.Key{{MarkerID: "a", Frame: 5, X: 0.3, Y: 0.3}, {MarkerID: "a", Frame: 9, X: 0.5, Y: 0.5}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("MarkerKeys(a) = %+v, want %+v (a correction on the placement frame replaces it)", got, want)
	}
	if err := domain.ValidateKeys([]domain.Key{s.Keys[2], s.Keys[0]}); err == nil {
		t.Fatal("keys out of frame order validated")
	}
	if err := domain.ValidateKeys([]domain.Key{s.Keys[0], s.Keys[0]}); err == nil {
		t.Fatal("two keys of one marker on one frame validated")
	}
	ordered := domain.WithKey(domain.WithKey(domain.WithKey(nil, s.Keys[2]), s.Keys[1]), s.Keys[0])
	if err := domain.ValidateKeys(ordered); err != nil {
		t.Fatalf("WithKey built an invalid list %+v: %v", ordered, err)
	}
}

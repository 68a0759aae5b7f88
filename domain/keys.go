package domain

import (
	"cmp"
	"slices"
	"time"
)

// Key frames: the correction loop. The tracer proposes a point for every
// marker on every traced frame; the user corrects one on any traced frame
// (CorrectPoint), and that frame becomes a key frame of that marker: a trace
// that reaches it restarts the marker there, from the corrected point. A
// retrace from the key frame (StartTrace with FromFrame = the key's frame)
// keeps every frame before it and re-tracks the frames after it.
//
// A marker's placement is its first key frame (Marker.Frame): it is tracked
// from the frame it was placed on, never before (there is no backward
// tracking).

// FieldKeys is the movie's key frames (Settings.Keys), absent when it has
// none.
const FieldKeys Field = "Settings.Keys"

// Key is a user's correction of one marker on one frame: on frame Frame the
// marker is at X, Y, normalised to [0, 1] of the frame's width and height
// (the same space as Marker).
type Key struct {
	MarkerID string
	Frame    int
	X, Y     float64
}

// MaxKeys bounds the key frames of a movie (all markers together), which
// keeps the row far below DynamoDB's item limit.
const MaxKeys = 256

// CodeSettingsChanged: the movie's settings changed between the read a
// correction was resolved against and its write (the same page wrote in
// between); nothing was written, and the caller may try again.
const CodeSettingsChanged Code = "settings_changed"

// compareKeys orders keys by frame, then marker ID: the one stored order,
// so that two equal key sets are equal lists.
func compareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Frame, b.Frame), cmp.Compare(a.MarkerID, b.MarkerID))
}

// ValidateKeys checks a key list on its own: at most MaxKeys, well-formed
// marker IDs, frames of a movie, coordinates inside the frame, in the stored
// order (compareKeys) with at most one key per marker and frame.
func ValidateKeys(keys []Key) error {
	if len(keys) > MaxKeys {
		return Invalid("keys", "at most %d key frames", MaxKeys)
	}
	for i, k := range keys {
		if err := k.validate(); err != nil {
			return err
		}
		if i > 0 && compareKeys(keys[i-1], k) >= 0 {
			return Invalid("keys", "must be ordered by frame and marker, one per marker and frame")
		}
	}
	return nil
}

func (k Key) validate() error {
	switch {
	case k.MarkerID == "" || len(k.MarkerID) > MaxMarkerLabel || !movieIDPattern.MatchString(k.MarkerID):
		return Invalid("markerId", "must be 1-%d of A-Z a-z 0-9 _ -", MaxMarkerLabel)
	case k.Frame < 0 || k.Frame >= MaxFrameCount:
		return Invalid("frame", "must be 0-%d", MaxFrameCount-1)
	case !unit(k.X) || !unit(k.Y):
		return Invalid("x", "coordinates must be within [0, 1]")
	}
	return nil
}

// WithKey returns keys with k in its place: it replaces the key of the same
// marker and frame, or is inserted in the stored order. keys is not changed.
func WithKey(keys []Key, k Key) []Key {
	out := slices.DeleteFunc(slices.Clone(keys), func(o Key) bool { return o.MarkerID == k.MarkerID && o.Frame == k.Frame })
	i, _ := slices.BinarySearchFunc(out, k, compareKeys)
	return slices.Insert(out, i, k)
}

// MarkerKeys is where the tracer (re)starts one marker: its placement (a key
// on Marker.Frame) and its corrections, by frame; a correction on the
// placement's frame replaces the placement.
func MarkerKeys(s Settings, mk Marker) []Key {
	out := []Key{{MarkerID: mk.ID, Frame: mk.Frame, X: mk.X, Y: mk.Y}}
	for _, k := range s.Keys {
		if k.MarkerID == mk.ID {
			out = WithKey(out, k)
		}
	}
	return out
}

// OnGrid reports whether frame f is a traced frame of the settings: within
// the trim and on its capture grid (Trim.Start + n * CaptureInterval).
func (s Settings) OnGrid(f int) bool {
	step := max(s.CaptureInterval, 1)
	return f >= s.Trim.Start && f < s.Trim.End && (f-s.Trim.Start)%step == 0
}

// CorrectPoint makes the user's correction of one marker on one traced
// frame a key frame of that marker (see Key), under the caller's analysis
// lease like every edit.
//
// It is resolved against the row it corrects (CorrectOn): Keys is the new
// key list, and Seen the settings and clean range read. Invariant: the
// marker exists and the frame is a traced frame of the settings (checked by
// CorrectOn on the row read, and the precondition holds the write to that
// very row); after the write every stored frame at or after the key's frame
// is outside the clean range (CleanBefore <= Key.Frame), so no trace can
// start after the correction without retracing it, while the frames before
// it stay clean: a retrace from the key's frame keeps them.
//
// Precondition: editGuard; the settings and clean range are still the ones
// read (else CodeSettingsChanged: nothing written, resolve again); and the
// correction changes something (the key differs, or frames after it were
// still clean). A correction already on the row is a success that writes
// nothing (AlreadyApplied).
type CorrectPoint struct {
	LeaseID string
	UserID  string // when set, must be the lease's user
	Now     time.Time
	Key     Key
	// Seen is what CorrectOn read: the settings (markers, trim, capture
	// interval, keys) and CleanBefore the correction was resolved against.
	Seen            Settings
	SeenCleanBefore int
}

// CorrectOn resolves the correction of marker key.MarkerID on frame
// key.Frame against the stored movie m: the marker must exist and the frame
// be a traced frame (Settings.OnGrid).
func CorrectOn(m Movie, leaseID, userID string, now time.Time, key Key) (CorrectPoint, error) {
	c := CorrectPoint{LeaseID: leaseID, UserID: userID, Now: now, Key: key, Seen: m.Settings, SeenCleanBefore: m.CleanBefore}
	if err := c.Validate(); err != nil {
		return CorrectPoint{}, err
	}
	if !slices.ContainsFunc(m.Settings.Markers, func(mk Marker) bool { return mk.ID == key.MarkerID }) {
		return CorrectPoint{}, Invalid("markerId", "no marker %q on this movie", key.MarkerID)
	}
	if !m.Settings.OnGrid(key.Frame) {
		s := m.Settings
		return CorrectPoint{}, Invalid("frame", "must be a traced frame: within the trim [%d, %d), every %d from %d",
			s.Trim.Start, s.Trim.End, max(s.CaptureInterval, 1), s.Trim.Start)
	}
	return c, nil
}

func (c CorrectPoint) Validate() error {
	return firstError(validateLeaseID("leaseId", c.LeaseID), c.Key.validate(), ValidateKeys(c.keys()))
}

// keys is the key list after the correction.
func (c CorrectPoint) keys() []Key { return WithKey(c.Seen.Keys, c.Key) }

// cleanBefore is the clean range after the correction.
func (c CorrectPoint) cleanBefore() int { return min(c.SeenCleanBefore, c.Key.Frame) }

// keysAre holds when the stored keys are keys (absent when there are none).
func keysAre(keys []Key) Cond {
	if len(keys) == 0 {
		return Absent{FieldKeys}
	}
	return Cmp(FieldKeys, OpEq, keys)
}

// seen holds when the row is still the one the correction was resolved
// against.
func (c CorrectPoint) seen() Cond {
	markers := c.Seen.Markers
	if markers == nil {
		markers = []Marker{}
	}
	return And{
		Cmp(FieldMarkers, OpEq, markers), keysAre(c.Seen.Keys), Cmp(FieldCleanBefore, OpEq, c.SeenCleanBefore),
		Cmp(FieldTrimStart, OpEq, c.Seen.Trim.Start), Cmp(FieldTrimEnd, OpEq, c.Seen.Trim.End),
		Cmp(FieldCaptureInterval, OpEq, c.Seen.CaptureInterval),
	}
}

// same holds when the row already shows the correction.
func (c CorrectPoint) same() Cond {
	return And{keysAre(c.keys()), Cmp(FieldCleanBefore, OpLe, c.Key.Frame)}
}

func (c CorrectPoint) Precondition() []Clause {
	return []Clause{
		editGuard(c.LeaseID, c.UserID, c.Now),
		unchanged(c.same()),
		{If: c.seen(), Else: func(Movie) error {
			return &Error{Code: CodeSettingsChanged, Message: "the movie's settings changed while the correction was made; try again"}
		}},
	}
}

// AlreadyApplied: the caller holds the lease and the row already has this
// key and no clean frame at or after it.
func (c CorrectPoint) AlreadyApplied() Cond {
	return And{heldBy(c.LeaseID, c.UserID, c.Now), c.same()}
}

func (c CorrectPoint) Update() []Assignment {
	return changed(c.Now, Set(FieldKeys, c.keys()), Set(FieldCleanBefore, c.cleanBefore()))
}

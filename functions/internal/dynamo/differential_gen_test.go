package dynamo_test

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/movietrace/tracinglocks/domain"
)

// The generator of the differential test. A check draws one command kind, an
// aim (accept or refuse) and then a stored row shaped for that command: when
// it aims to accept, every part of the precondition is drawn at a value that
// satisfies it, often on the boundary (an expiry 1 ms after now, a trim end
// equal to the frame count, a start frame at the trim's edges); when it aims
// to refuse, exactly one part is drawn on the wrong side of its boundary. The
// verdict is always the domain's (domain.Execute), never the aim's, so the
// aim only makes both verdicts frequent for every command.

var commandKinds = []string{
	"OpenAnalysis", "Heartbeat", "Release", "EditMarkers", "EditTrim", "EditCaptureInterval",
	"StartTrace", "BeginTrace", "RenewJob", "CompleteJob", "FailJob",
	"CompleteIngest", "FailIngest", "ExpireUpload",
	"ClaimSegment", "HandOffJob", "FinalizeStaleTrace", "CancelTrace",
	"EditCalibration", "ClearCalibration",
}

// ingestKinds need an awaiting upload, not a lease.
var ingestKinds = map[string]bool{"CompleteIngest": true, "FailIngest": true, "ExpireUpload": true}

var (
	analysable   = []domain.Status{domain.StatusReady, domain.StatusTracing, domain.StatusTraced, domain.StatusFailed}
	unanalysable = []domain.Status{domain.StatusAwaitingUpload, domain.StatusIngestFailed}
)

// A small pool of IDs makes matches, mismatches and reuse all likely.
var idPool = []string{
	"0123456789abcdef0123456789abcdef",
	"fedcba9876543210fedcba9876543210",
	"00000000000000000000000000000001",
}

var users = []domain.User{{ID: "u1", Name: "Ada"}, {ID: "u2", Name: "Brian"}}

// nowMs is the whole millisecond every check's now falls in; stored times
// are whole milliseconds (the stored precision), now may carry a fraction
// (genNowIn), so the store's truncation of now is exercised.
var nowMs = t0.Add(123 * time.Millisecond)

// liveOffsets put an expiry after any now in [nowMs, nowMs+1ms) (live),
// staleOffsets at or before it (stale, the first of them exactly at nowMs).
var (
	liveOffsets  = []time.Duration{time.Millisecond, time.Second, time.Minute}
	staleOffsets = []time.Duration{0, -time.Millisecond, -time.Minute}
)

func genNowIn(t *rapid.T) time.Time {
	return nowMs.Add(rapid.SampledFrom([]time.Duration{0, 0, 400 * time.Microsecond, 999_999 * time.Nanosecond}).Draw(t, "nowFraction"))
}

// wanted is what a command needs of the stored lease.
type wanted struct {
	kind    domain.LeaseKind // "" for OpenAnalysis: no live lease
	claimed bool
}

func wantsOf(kind string) wanted {
	switch kind {
	case "OpenAnalysis":
		return wanted{}
	case "Heartbeat", "Release", "EditMarkers", "EditTrim", "EditCaptureInterval", "StartTrace", "EditCalibration", "ClearCalibration":
		return wanted{kind: domain.LeaseAnalysis}
	case "ClaimSegment", "FinalizeStaleTrace", "CancelTrace":
		return wanted{kind: domain.LeaseTracing}
	}
	return wanted{kind: domain.LeaseTracing, claimed: true}
}

// genCase draws the stored movie (nil: none) and the command of one check.
func genCase(t *rapid.T, id, kind string) (*domain.Movie, domain.Command) {
	accept := rapid.Bool().Draw(t, "aimAccept")
	// The one part of the precondition a refusing check breaks.
	breaks := ""
	if !accept {
		breaks = rapid.SampledFrom(partsOf(kind)).Draw(t, "breaks")
	}
	bad := func(part string) bool { return breaks == part }

	m := genMovie(t, id)
	want := wantsOf(kind)
	capability := rapid.SampledFrom(idPool).Draw(t, "capability")
	m.Lease = genLease(t, want, capability, bad)
	if m.Lease != nil && m.Lease.Kind == domain.LeaseTracing {
		m.Lease.Segment = rapid.IntRange(0, 2).Draw(t, "segment")
	}
	if kind == "FinalizeStaleTrace" && m.Lease != nil {
		// Finalizing wants a stale lease: "live" breaks it.
		m.Lease.ExpiresAt = nowMs.Add(rapid.SampledFrom(staleOffsets).Draw(t, "finalStaleIn"))
		if bad("live") {
			m.Lease.ExpiresAt = nowMs.Add(rapid.SampledFrom(liveOffsets).Draw(t, "finalLiveIn"))
		}
		m.Lease.Claimed = rapid.Bool().Draw(t, "finalClaimed")
	}
	if kind == "StartTrace" && !bad("markers") && len(m.Settings.Markers) == 0 {
		m.Settings.Markers = genMarkers(t, "storedAgain", 1)
	}
	if kind == "StartTrace" && bad("markers") {
		m.Settings.Markers = []domain.Marker{}
	}
	switch {
	case ingestKinds[kind]:
		genUpload(t, &m, bad)
	case bad("status"):
		m.Status = rapid.SampledFrom(unanalysable).Draw(t, "unanalysable")
	}
	cmd := genCommand(t, kind, &m, capability, bad)
	if bad("exists") {
		return nil, cmd
	}
	return &m, cmd
}

func genLease(t *rapid.T, want wanted, capability string, bad func(string) bool) *domain.Lease {
	expires := nowMs.Add(rapid.SampledFrom(liveOffsets).Draw(t, "liveIn"))
	if bad("live") {
		expires = nowMs.Add(rapid.SampledFrom(staleOffsets).Draw(t, "staleIn"))
	}
	kind, id := want.kind, capability
	if want.kind == "" { // OpenAnalysis: breaking means a live lease of any kind
		if !bad("live") && !bad("present") && !bad("kind") && !bad("id") {
			if rapid.Bool().Draw(t, "noLease") {
				return nil
			}
			expires = nowMs.Add(rapid.SampledFrom(staleOffsets).Draw(t, "staleIn"))
		}
		kind = rapid.SampledFrom([]domain.LeaseKind{domain.LeaseAnalysis, domain.LeaseTracing}).Draw(t, "anyKind")
		id = rapid.SampledFrom(idPool).Draw(t, "anyID")
	}
	if bad("present") && want.kind != "" {
		return nil
	}
	if bad("kind") && want.kind != "" {
		kind = map[domain.LeaseKind]domain.LeaseKind{domain.LeaseAnalysis: domain.LeaseTracing, domain.LeaseTracing: domain.LeaseAnalysis}[kind]
	}
	if bad("id") && want.kind != "" {
		id = otherID(t, capability)
	}
	claimed := want.claimed
	if want.kind == domain.LeaseAnalysis || want.kind == "" {
		claimed = kind == domain.LeaseTracing && rapid.Bool().Draw(t, "claimed")
	} else if bad("claimed") {
		claimed = !claimed
	}
	u := rapid.SampledFrom(users).Draw(t, "holder")
	return &domain.Lease{
		Kind: kind, ID: id, UserID: u.ID, UserName: u.Name,
		AcquiredAt: expires.Add(-10 * time.Second), HeartbeatAt: expires.Add(-5 * time.Second), ExpiresAt: expires,
		Claimed: claimed, FromFrame: rapid.IntRange(0, 120).Draw(t, "leaseFrom"),
	}
}

// partsOf lists the parts of kind's precondition a refusing check may break.
func partsOf(kind string) []string {
	lease := []string{"exists", "present", "kind", "id", "live"}
	switch kind {
	case "OpenAnalysis":
		return []string{"exists", "live", "status"}
	case "EditTrim", "EditCalibration":
		return append(lease, "range")
	case "StartTrace":
		return append(lease, "markers", "range")
	case "BeginTrace", "RenewJob", "CompleteJob", "FailJob":
		return append(lease, "claimed")
	case "ClaimSegment", "HandOffJob":
		return append(lease, "claimed", "range")
	case "FinalizeStaleTrace":
		return []string{"exists", "present", "kind", "id", "live", "range"}
	case "CancelTrace":
		return append(lease, "user")
	case "CompleteIngest", "FailIngest":
		return []string{"exists", "status"}
	case "ExpireUpload":
		return []string{"exists", "status", "present", "range"}
	}
	return lease
}

// genUpload shapes the movie for an ingest command: awaiting an upload that
// expires at a boundary around now (expired for ExpireUpload's aim).
func genUpload(t *rapid.T, m *domain.Movie, bad func(string) bool) {
	m.Status = domain.StatusAwaitingUpload
	if bad("status") {
		m.Status = rapid.SampledFrom(append([]domain.Status{domain.StatusIngestFailed}, analysable...)).Draw(t, "notAwaiting")
	}
	m.Video, m.Lease = nil, nil
	if bad("present") {
		m.Upload = nil
		return
	}
	offsets := staleOffsets // expired: ExpiresAt <= now
	if bad("range") || bad("live") {
		offsets = liveOffsets
	}
	m.Upload = &domain.Upload{FileName: "a.mp4", ContentType: "video/mp4", SizeBytes: 10,
		ExpiresAt: nowMs.Add(rapid.SampledFrom(offsets).Draw(t, "uploadExpiresIn"))}
}

// userOf draws the user an edit is bound to: mostly the stored lease's, else
// another one or none.
func userOf(t *rapid.T, m *domain.Movie) string {
	switch rapid.IntRange(0, 5).Draw(t, "editUser") {
	case 0:
		return ""
	case 1:
		return rapid.SampledFrom(users).Draw(t, "anyEditUser").ID
	}
	if m.Lease != nil {
		return m.Lease.UserID
	}
	return users[0].ID
}

func otherID(t *rapid.T, id string) string {
	for {
		if o := rapid.SampledFrom(idPool).Draw(t, "otherID"); o != id {
			return o
		}
	}
}

func genMarkers(t *rapid.T, label string, min int) []domain.Marker {
	n := rapid.IntRange(min, 3).Draw(t, label+"Count")
	out := make([]domain.Marker, n)
	for i := range out {
		out[i] = domain.Marker{ID: fmt.Sprintf("m%d", i), Label: "pt", X: float64(rapid.IntRange(0, 8).Draw(t, label+"X")) / 8, Y: 0.25}
	}
	return out
}

func genMovie(t *rapid.T, id string) domain.Movie {
	frames := rapid.IntRange(1, 120).Draw(t, "frameCount")
	start := rapid.IntRange(0, frames-1).Draw(t, "trimStart")
	m := domain.Movie{
		ID: id, Title: "t", FrameCount: frames, FrameRate: 25,
		Status: rapid.SampledFrom(analysable).Draw(t, "status"),
		Settings: domain.Settings{
			Markers:         genMarkers(t, "stored", 0),
			Trim:            domain.Trim{Start: start, End: rapid.IntRange(start+1, frames).Draw(t, "trimEnd")},
			CaptureInterval: rapid.IntRange(1, 5).Draw(t, "interval"),
		},
		Progress:    domain.Progress{FramesWritten: rapid.IntRange(0, 10).Draw(t, "written"), TotalFrames: 10},
		CleanBefore: rapid.IntRange(0, frames).Draw(t, "cleanBefore"),
		Version:     rapid.Int64Range(1, 1000).Draw(t, "version"),
		UpdatedAt:   t0,
	}
	if rapid.Bool().Draw(t, "hasVideo") {
		m.Video = &domain.Video{Width: 4, Height: 3, Codec: "h264", DurationSeconds: 1.5}
	}
	if i := rapid.IntRange(-1, len(calibrationPool)-1).Draw(t, "calibration"); i >= 0 {
		c := calibrationPool[i]
		m.Calibration = &c
	}
	if rapid.Bool().Draw(t, "hasLastJob") {
		m.LastJob = &domain.JobRecord{JobID: idPool[0], Status: domain.StatusTraced, UserID: "u1", UserName: "Ada", StartedAt: t0, FinishedAt: t0, Frames: 3}
	}
	return m
}

// calibrationPool: a few calibrations, so a stored one and a new one are
// often equal (a no-op edit) and often differ in one number only.
var calibrationPool = []domain.Calibration{
	{Line: domain.Line{X1: 0.1, Y1: 0.5, X2: 0.9, Y2: 0.5}, Length: 2, Unit: domain.UnitMetre, OriginX: 0.5, OriginY: 0.5, YUp: true},
	{Line: domain.Line{X1: 0.1, Y1: 0.5, X2: 0.9, Y2: 0.5}, Length: 2.5, Unit: domain.UnitMetre, OriginX: 0.5, OriginY: 0.5, YUp: true},
	{Line: domain.Line{X1: 0.1, Y1: 0.5, X2: 0.9, Y2: 0.5}, Length: 2, Unit: domain.UnitCentimetre, OriginX: 0.5, OriginY: 0.5, YUp: true},
	{Line: domain.Line{X1: 0.1, Y1: 0.1, X2: 0.9, Y2: 0.1}, Length: 1e-3, Unit: domain.UnitMillimetre, YLine: domain.Line{X1: 0.2, Y1: 0.1, X2: 0.2, Y2: 0.9}, YLength: 0.123456789, Angle: -12.5},
}

// edge draws a value at or next to a boundary, or anywhere in [lo, hi].
func edge(t *rapid.T, label string, lo, hi int, edges ...int) int {
	if rapid.IntRange(0, 3).Draw(t, label+"Anywhere") == 0 || hi < lo {
		return rapid.IntRange(min(lo, hi), max(lo, hi)).Draw(t, label)
	}
	return rapid.SampledFrom(edges).Draw(t, label+"Edge")
}

func genCommand(t *rapid.T, kind string, m *domain.Movie, capability string, bad func(string) bool) domain.Command {
	now := genNowIn(t)
	d := time.Duration(rapid.IntRange(1, 20).Draw(t, "durationS")) * time.Second
	user := rapid.SampledFrom(users).Draw(t, "user")
	fence := domain.JobFence{JobID: capability, Now: now}
	frame := rapid.IntRange(0, 130).Draw(t, "frame")
	// A worker's job snapshot is the lease it claimed.
	job := domain.Lease{Kind: domain.LeaseTracing, ID: capability, UserID: "u1", UserName: "Ada", AcquiredAt: t0, FromFrame: 3}
	if m.Lease != nil && m.Lease.Kind == domain.LeaseTracing && m.Lease.ID == capability {
		job = *m.Lease
	}
	fc, tr := m.FrameCount, m.Settings.Trim
	switch kind {
	case "OpenAnalysis":
		return domain.OpenAnalysis{LeaseID: rapid.SampledFrom(idPool).Draw(t, "newLease"), User: user, Now: now, Duration: d}
	case "Heartbeat":
		return domain.Heartbeat{LeaseID: capability, Now: now, Duration: d}
	case "Release":
		return domain.Release{LeaseID: capability, Now: now}
	case "EditMarkers":
		return domain.EditMarkers{LeaseID: capability, UserID: userOf(t, m), Now: now, Markers: genMarkers(t, "new", 0)}
	case "EditTrim":
		end := edge(t, "newTrimEnd", 1, fc, fc, fc-1)
		if bad("range") {
			end = edge(t, "newTrimEnd", fc+1, fc+20, fc+1)
		}
		if end < 1 {
			end = 1
		}
		start := rapid.IntRange(0, end-1).Draw(t, "newTrimStart")
		return domain.EditTrim{LeaseID: capability, UserID: userOf(t, m), Now: now, Trim: domain.Trim{Start: start, End: end}}
	case "EditCalibration":
		c := rapid.SampledFrom(calibrationPool).Draw(t, "newCalibration")
		c.Frame = edge(t, "calibrationFrame", 0, fc-1, 0, fc-1)
		if bad("range") {
			c.Frame = edge(t, "calibrationFrame", fc, fc+20, fc)
		}
		return domain.EditCalibration{LeaseID: capability, UserID: userOf(t, m), Now: now, Calibration: c}
	case "ClearCalibration":
		return domain.ClearCalibration{LeaseID: capability, UserID: userOf(t, m), Now: now}
	case "EditCaptureInterval":
		return domain.EditCaptureInterval{LeaseID: capability, UserID: userOf(t, m), Now: now, Interval: rapid.IntRange(1, 9).Draw(t, "newInterval")}
	case "StartTrace":
		from := edge(t, "fromFrame", tr.Start, tr.End-1, tr.Start, tr.End-1)
		if bad("range") {
			from = edge(t, "fromFrame", tr.End, tr.End+10, tr.End, max(tr.Start-1, 0))
		}
		lease := capability
		if m.Lease == nil || !m.Lease.LiveAt(now) || rapid.IntRange(0, 5).Draw(t, "noLeaseID") == 0 {
			lease = rapid.SampledFrom(append([]string{""}, idPool...)).Draw(t, "traceLeaseID")
		}
		return domain.StartTrace{LeaseID: lease, JobID: rapid.SampledFrom(idPool).Draw(t, "newJob"), User: user, FromFrame: from, Now: now, Duration: d}
	case "BeginTrace":
		return domain.BeginTrace{JobFence: fence, Duration: d, CleanBefore: frame, TotalFrames: 40}
	case "RenewJob":
		return domain.RenewJob{JobFence: fence, Duration: d, FramesWritten: frame}
	case "CompleteJob":
		return domain.CompleteJob{Job: job, Now: now, FramesWritten: frame}
	case "CancelTrace":
		// The job's starter cancels; "user" breaks it with the other user.
		u := users[0]
		if m.Lease != nil {
			u = domain.User{ID: m.Lease.UserID, Name: m.Lease.UserName}
		}
		if bad("user") {
			u = users[0]
			if m.Lease != nil && m.Lease.UserID == users[0].ID {
				u = users[1]
			}
		}
		return domain.CancelTrace{Job: job, User: u, Now: now, FramesWritten: frame}
	case "FailJob":
		return domain.FailJob{Job: job, Now: now, FramesWritten: frame, Summary: "marker m0 lost at /var/task/trace.go:42 token=abc"}
	case "ClaimSegment":
		seg := 0
		if m.Lease != nil {
			seg = m.Lease.Segment
		}
		if bad("range") {
			seg = (seg + 1 + rapid.IntRange(0, 1).Draw(t, "otherSegment")) % 3
		}
		token := rapid.SampledFrom(append([]string{""}, idPool...)).Draw(t, "segToken")
		return domain.ClaimSegment{JobID: capability, Segment: seg, Token: token, Now: now, Duration: d}
	case "HandOffJob":
		seg := 0
		if m.Lease != nil {
			seg = m.Lease.Segment
		}
		if bad("range") {
			seg = (seg + 1) % 3
		}
		return domain.HandOffJob{JobFence: fence, Segment: seg, Duration: d, FramesWritten: frame}
	case "FinalizeStaleTrace":
		snap := job
		if m.Lease != nil {
			snap = *m.Lease
			snap.ID = capability
		}
		frames := m.Progress.FramesWritten
		if bad("range") {
			frames++
		}
		return domain.FinalizeStaleTrace{Job: snap, FramesWritten: frames, Now: now}
	case "CompleteIngest":
		return domain.CompleteIngest{FrameCount: rapid.IntRange(1, 130).Draw(t, "ingestFrames"), FrameRate: 29.97, Now: now,
			Video: domain.Video{Width: 640, Height: 480, Codec: "h264", DurationSeconds: 4.2}}
	case "FailIngest":
		return domain.FailIngest{Summary: "not a video file at /tmp/x.mp4", Now: now}
	case "ExpireUpload":
		return domain.ExpireUpload{Now: now}
	}
	t.Fatalf("unknown command kind %q", kind)
	return nil
}

package domain_test

import (
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/movietrace/tracinglocks/domain"
)

// TestLeaseMachine drives one movie with random command sequences from
// several browsers (each with its own lease IDs, sometimes reusing old ones)
// and workers (claiming any job ever started, as SQS may redeliver), on a
// clock that moves forward by random steps, sometimes past the lease
// duration or exactly onto an expiry. Every command goes through Execute.
//
// A small model predicts each outcome (the refusal code, or acceptance) from
// the lease rules alone, and after every step the test checks:
//
//   - the stored lease, settings and Version equal the model's;
//   - at most one lease ID or job ID known to anyone is honoured at a time
//     (exactly one while the movie has a live lease);
//   - Version grows by one on an accepted command and not at all on a
//     refused one, and a refused command returns the movie unchanged;
//     Execute never mutates the movie it is given;
//   - settings change only through an accepted edit carrying the live
//     analysis lease's ID;
//   - a Release never removes a tracing lease or a lease with another ID;
//   - each job is claimed at most once;
//   - BeginTrace, RenewJob, CompleteJob and FailJob of a job land only while
//     that job's lease is live and claimed;
//   - status: the stored status is tracing iff the last accepted command
//     among StartTrace, CompleteJob and FailJob was StartTrace. Those are
//     the only commands that write Status (StartTrace sets tracing, the
//     terminal writes traced or tracing_failed); no other command, and no
//     passing of time, changes it, so a stale tracing lease or one replaced
//     by OpenAnalysis leaves it tracing. What readers see differs: the view
//     says tracing iff a live tracing lease exists;
//   - every failure summary a reader can see is a fixed point of
//     SanitizeSummary and passes RequireSafeSummary.
func TestLeaseMachine(t *testing.T) {
	stats := newActionStats()
	// A round is rapid's checks (100 by default). Some commands are accepted
	// only a handful of times per round (a terminal write needs a claimed,
	// live job), so a round now and then draws none of one kind; more rounds,
	// up to 5, are run until every kind was both accepted and refused, which
	// is then required as before.
	for round := 0; round < 5 && (round == 0 || !stats.bothOutcomes()); round++ {
		leaseMachineRound(t, stats)
	}
	stats.requireBothOutcomes(t)
}

func leaseMachineRound(t *testing.T, stats *actionStats) {
	t.Helper()
	rapid.Check(t, func(rt *rapid.T) {
		w := newWorld(rt, stats)
		if rapid.IntRange(0, 3).Draw(rt, "setUp") > 0 {
			// Most runs start where real use does: a browser opened Analyze
			// and placed markers; otherwise few traces would ever start.
			b := w.browsers[0]
			b.ids = append(b.ids, w.ids.Next())
			w.exec("open", domain.OpenAnalysis{LeaseID: b.ids[0], User: b.user, Now: w.now, Duration: d})
			w.exec("markers", domain.EditMarkers{LeaseID: b.ids[0], Now: w.now, Markers: GenMarkers(1, 4).Draw(rt, "firstMarkers")})
			w.check()
		}
		steps := rapid.IntRange(10, 200).Draw(rt, "steps")
		for range steps {
			action := rapid.SampledFrom(weightedActions).Draw(rt, "action")
			w.actions[action]()
			w.check()
		}
	})
}

// weightedActions lists each action name once per unit of weight.
var weightedActions = func() []string {
	weights := map[string]int{
		"tick": 4, "tickToExpiry": 2,
		"open": 3, "heartbeat": 2, "release": 2,
		"markers": 2, "trim": 1, "interval": 1,
		"start": 3, "claim": 3, "begin": 2, "renew": 2, "complete": 2, "fail": 2,
	}
	var out []string
	for name, n := range weights {
		for range n {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}()

// browser is one Analyze page: its user and every lease ID it has used.
type browser struct {
	name string
	user domain.User
	ids  []string
}

// world is the property test's universe: the stored movie, the clock, the
// browsers and workers, and the model.
type world struct {
	t       *rapid.T
	m       domain.Movie
	now     time.Time
	ids     IDSource
	stats   *actionStats
	actions map[string]func()

	browsers    []*browser
	jobs        []string                    // every accepted StartTrace's job ID, in order
	everJob     map[string]bool             // every ID ever sent as a StartTrace JobID
	workerLease map[string]domain.Lease     // the lease each job's worker got from its claim
	plans       map[string]domain.TracePlan // each claimed job's plan
	claims      map[string]int              // accepted claims per job ID

	// The model: what the stored movie must hold.
	lease       *domain.Lease
	settings    domain.Settings
	version     int64
	lastTrace   string // "", or the last accepted of StartTrace, CompleteJob, FailJob
	lastJobID   string // the job of the last accepted CompleteJob or FailJob
	lastJobEnd  string // and which of the two it was ("TakenOver": recorded by a takeover)
	lastSummary string // the summary of the last accepted FailJob
}

func newWorld(t *rapid.T, stats *actionStats) *world {
	m := GenMovie().Draw(t, "movie")
	w := &world{
		t: t, m: m, now: m.UpdatedAt, stats: stats,
		browsers: []*browser{
			{name: "alice-1", user: alice},
			{name: "alice-2", user: alice}, // the same user in a second browser
			{name: "bob", user: bob},
			{name: "other", user: GenUser().Draw(t, "otherUser")},
		},
		everJob:     map[string]bool{},
		workerLease: map[string]domain.Lease{},
		plans:       map[string]domain.TracePlan{},
		claims:      map[string]int{},
		settings:    CloneMovie(m).Settings,
		version:     m.Version,
	}
	w.actions = map[string]func(){
		"tick": func() { w.now = w.now.Add(GenClockStep().Draw(t, "step")) },
		"tickToExpiry": func() {
			if w.m.Lease == nil {
				return
			}
			target := w.m.Lease.ExpiresAt.Add(rapid.SampledFrom([]time.Duration{-ms, 0}).Draw(t, "offset"))
			if target.After(w.now) {
				w.now = target
			}
		},
		"open": func() {
			b := w.browser()
			id := w.ids.Next()
			if len(b.ids) > 0 && rapid.IntRange(0, 3).Draw(t, "reuse") == 0 {
				id = rapid.SampledFrom(b.ids).Draw(t, "oldID")
			}
			if !slices.Contains(b.ids, id) {
				b.ids = append(b.ids, id)
			}
			w.exec("open", domain.OpenAnalysis{LeaseID: id, User: b.user, Now: w.now, Duration: GenLeaseDuration().Draw(t, "duration")})
		},
		"heartbeat": func() {
			w.exec("heartbeat", domain.Heartbeat{LeaseID: w.leaseID(w.browser(), false), Now: w.now, Duration: GenLeaseDuration().Draw(t, "duration")})
		},
		"release": func() {
			w.exec("release", domain.Release{LeaseID: w.leaseID(w.browser(), false), Now: w.now})
		},
		"markers": func() {
			w.exec("markers", domain.EditMarkers{LeaseID: w.leaseID(w.browser(), false), Now: w.now, Markers: rapid.OneOf(GenMarkers(1, 4), GenMarkers(0, 4)).Draw(t, "markers")})
		},
		"trim": func() {
			w.exec("trim", domain.EditTrim{LeaseID: w.leaseID(w.browser(), false), Now: w.now, Trim: GenTrim(w.m.FrameCount).Draw(t, "trim")})
		},
		"interval": func() {
			w.exec("interval", domain.EditCaptureInterval{LeaseID: w.leaseID(w.browser(), false), Now: w.now, Interval: GenCaptureInterval().Draw(t, "interval")})
		},
		"start": func() {
			b := w.browser()
			leaseID := w.leaseID(b, true)
			// Job IDs are fresh, as the API generates them. Rarely the job
			// reuses the caller's lease ID string, to show that kinds, not
			// ID strings, decide; no ID is ever a job ID twice.
			job := w.ids.Next()
			if domain.ValidLeaseID(leaseID) && !w.everJob[leaseID] && rapid.IntRange(0, 5).Draw(t, "jobIsLeaseID") == 0 {
				job = leaseID
			}
			w.everJob[job] = true
			from := rapid.IntRange(0, w.m.FrameCount-1).Draw(t, "anyFrom")
			if tr := w.m.Settings.Trim; tr.End <= w.m.FrameCount && rapid.Bool().Draw(t, "fromInTrim") {
				from = rapid.IntRange(tr.Start, tr.End-1).Draw(t, "fromInTrim")
			}
			c := domain.StartTrace{LeaseID: leaseID, JobID: job, User: b.user, FromFrame: from, Now: w.now, Duration: GenLeaseDuration().Draw(t, "duration")}
			if _, err := w.exec("start", c); err == nil {
				w.jobs = append(w.jobs, job)
			}
		},
		"claim": func() {
			job := w.jobID()
			next, err := w.exec("claim", domain.ClaimSegment{JobID: job, Now: w.now, Duration: GenLeaseDuration().Draw(t, "duration")})
			if err == nil {
				w.workerLease[job] = *next.Lease
				p := domain.PlanTrace(next, *next.Lease)
				requirePlanSound(t, next, *next.Lease, p)
				w.plans[job] = p
			}
		},
		"begin": func() {
			job := w.jobID()
			p := w.plans[job]
			w.exec("begin", domain.BeginTrace{JobFence: domain.JobFence{JobID: job, Now: w.now}, Duration: GenLeaseDuration().Draw(t, "duration"), CleanBefore: p.ClearFrom, TotalFrames: p.Frames, PlanFrom: p.From})
		},
		"renew": func() {
			job := w.jobID()
			n := rapid.IntRange(0, w.plans[job].Frames).Draw(t, "framesWritten")
			w.exec("renew", domain.RenewJob{JobFence: domain.JobFence{JobID: job, Now: w.now}, Duration: GenLeaseDuration().Draw(t, "duration"), FramesWritten: n})
		},
		"complete": func() {
			job := w.jobID()
			p := w.plans[job]
			w.exec("complete", domain.CompleteJob{Job: w.workerJob(job), Now: w.now, FramesWritten: p.Frames})
		},
		"fail": func() {
			job := w.jobID()
			n := rapid.IntRange(0, w.plans[job].Frames).Draw(t, "framesWritten")
			w.exec("fail", domain.FailJob{Job: w.workerJob(job), Now: w.now, FramesWritten: n, Summary: GenFailureText().Draw(t, "summary")})
		},
	}
	return w
}

func (w *world) browser() *browser {
	return rapid.SampledFrom(w.browsers).Draw(w.t, "browser")
}

// leaseID picks the lease ID a browser sends: mostly its newest, sometimes
// an old one of its own, another browser's, a job ID, a malformed one, or
// (when allowEmpty, as StartTrace allows) none.
func (w *world) leaseID(b *browser, allowEmpty bool) string {
	t := w.t
	switch rapid.IntRange(0, 11).Draw(t, "leaseChoice") {
	case 0, 1:
		if len(b.ids) > 0 {
			return rapid.SampledFrom(b.ids).Draw(t, "ownOldID")
		}
	case 2:
		if o := w.browser(); len(o.ids) > 0 {
			return o.ids[len(o.ids)-1]
		}
	case 3:
		if len(w.jobs) > 0 {
			return rapid.SampledFrom(w.jobs).Draw(t, "jobAsLease")
		}
	case 4:
		if rapid.IntRange(0, 3).Draw(t, "bad") == 0 {
			return GenBadLeaseID().Draw(t, "badLeaseID")
		}
	case 5:
		if allowEmpty {
			return ""
		}
		if rapid.IntRange(0, 3).Draw(t, "empty") == 0 {
			return ""
		}
	}
	if len(b.ids) > 0 {
		return b.ids[len(b.ids)-1]
	}
	return w.ids.Next()
}

// workerJob is the lease a worker passes to a terminal write: the one it
// got from its claim, or, for a worker that never claimed, just the ID.
func (w *world) workerJob(job string) domain.Lease {
	if l, ok := w.workerLease[job]; ok {
		return l
	}
	return domain.Lease{Kind: domain.LeaseTracing, ID: job}
}

// jobID picks the job a worker acts for: mostly the newest job, sometimes an
// older one (a late redelivery), one never started, a browser's lease ID, or
// a malformed one.
func (w *world) jobID() string {
	t := w.t
	switch rapid.IntRange(0, 9).Draw(t, "jobChoice") {
	case 0:
		return w.ids.Next()
	case 1:
		if b := w.browser(); len(b.ids) > 0 {
			return rapid.SampledFrom(b.ids).Draw(t, "leaseAsJob")
		}
	case 2:
		return GenBadLeaseID().Draw(t, "badJobID")
	case 3, 4:
		if len(w.jobs) > 0 {
			return rapid.SampledFrom(w.jobs).Draw(t, "oldJob")
		}
	}
	if len(w.jobs) > 0 {
		return w.jobs[len(w.jobs)-1]
	}
	return w.ids.Next()
}

// expect is the model's prediction for c at w.now: the refusal code, or ""
// when c must be accepted. It reads only the model, never the movie's lease.
func (w *world) expect(c domain.Command) domain.Code {
	if err := c.Validate(); err != nil {
		return domain.ErrorCode(err)
	}
	l := w.lease
	live := l != nil && w.now.Before(l.ExpiresAt)
	blocked := domain.CodeLeaseHeld
	if live && l.Kind == domain.LeaseTracing {
		blocked = domain.CodeTracingInProgress
	}
	owns := func(id string) bool { return live && l.Kind == domain.LeaseAnalysis && l.ID == id }
	edit := func(id string) domain.Code {
		switch {
		case owns(id):
			return ""
		case live:
			return blocked
		}
		return domain.CodeLeaseLost
	}
	fence := func(job string) domain.Code {
		if live && l.Kind == domain.LeaseTracing && l.ID == job && l.Claimed {
			return ""
		}
		return domain.CodeLeaseLost
	}
	switch c := c.(type) {
	case domain.OpenAnalysis:
		if live {
			return blocked
		}
	case domain.Heartbeat:
		if !owns(c.LeaseID) {
			return domain.CodeLeaseLost
		}
	case domain.Release:
		if !owns(c.LeaseID) {
			return domain.CodeNotHeld
		}
	case domain.EditMarkers:
		return edit(c.LeaseID)
	case domain.EditCaptureInterval:
		return edit(c.LeaseID)
	case domain.EditTrim:
		if code := edit(c.LeaseID); code != "" {
			return code
		}
		if c.Trim.End > w.m.FrameCount {
			return domain.CodeInvalid
		}
	case domain.StartTrace:
		switch {
		case c.LeaseID == "" && live:
			return blocked
		case c.LeaseID != "" && !(owns(c.LeaseID) && l.UserID == c.User.ID):
			return edit("") // blocked by the live lease, else lease_lost
		}
		if len(w.settings.Markers) == 0 || c.FromFrame < w.settings.Trim.Start || c.FromFrame >= w.settings.Trim.End {
			return domain.CodeInvalid
		}
	case domain.ClaimSegment:
		// The job's lease, live or stale (a job that waited in the queue
		// longer than its lease is revived), never replaced or ended.
		if !(l != nil && l.Kind == domain.LeaseTracing && l.ID == c.JobID) {
			return domain.CodeLeaseLost
		}
		if l.Claimed {
			return domain.CodeAlreadyClaimed
		}
	case domain.BeginTrace:
		return fence(c.JobID)
	case domain.RenewJob:
		return fence(c.JobID)
	case domain.CompleteJob:
		return fence(c.Job.ID)
	case domain.FailJob:
		return fence(c.Job.ID)
	default:
		w.t.Fatalf("the model does not know %T", c)
	}
	return ""
}

// model advances the model over an accepted command.
func (w *world) model(c domain.Command) {
	w.version++
	renew := func(dur time.Duration) {
		l := *w.lease
		l.HeartbeatAt, l.ExpiresAt = w.now, w.now.Add(dur)
		w.lease = &l
	}
	// An acquisition over a stale tracing lease records its job as failed
	// (issue 12 item 10); an open leaves the status failed too.
	if l := w.lease; l != nil && l.Kind == domain.LeaseTracing {
		switch c.(type) {
		case domain.OpenAnalysis:
			w.lastTrace, w.lastJobID, w.lastJobEnd = "FailJob", l.ID, "TakenOver"
		case domain.StartTrace:
			w.lastJobID, w.lastJobEnd = l.ID, "TakenOver"
		}
	}
	switch c := c.(type) {
	case domain.OpenAnalysis:
		w.lease = &domain.Lease{Kind: domain.LeaseAnalysis, ID: c.LeaseID, UserID: c.User.ID, UserName: c.User.Name,
			AcquiredAt: w.now, HeartbeatAt: w.now, ExpiresAt: w.now.Add(c.Duration)}
	case domain.Heartbeat:
		renew(c.Duration)
	case domain.Release:
		w.lease = nil
	case domain.EditMarkers:
		w.settings.Markers = append([]domain.Marker{}, c.Markers...)
	case domain.EditTrim:
		w.settings.Trim = c.Trim
	case domain.EditCaptureInterval:
		w.settings.CaptureInterval = c.Interval
	case domain.StartTrace:
		w.lease = &domain.Lease{Kind: domain.LeaseTracing, ID: c.JobID, UserID: c.User.ID, UserName: c.User.Name,
			AcquiredAt: w.now, HeartbeatAt: w.now, ExpiresAt: w.now.Add(c.Duration), FromFrame: c.FromFrame}
		w.lastTrace = "StartTrace"
	case domain.ClaimSegment:
		renew(c.Duration)
		w.lease.Claimed = true
	case domain.BeginTrace:
		renew(c.Duration)
		w.lease.PlanFrom = c.PlanFrom
	case domain.RenewJob:
		renew(c.Duration)
	case domain.CompleteJob:
		w.lease = nil
		w.lastTrace, w.lastJobID, w.lastJobEnd = "CompleteJob", c.Job.ID, "CompleteJob"
	case domain.FailJob:
		w.lease = nil
		w.lastTrace, w.lastJobID, w.lastJobEnd = "FailJob", c.Job.ID, "FailJob"
		w.lastSummary = c.SafeSummary()
	}
}

// replayed is the model's prediction that c already took effect, so it
// succeeds and writes nothing: the caller's own live analysis lease for an
// open, the same setting under the caller's lease for an edit, this job
// already started or finished the same way.
func (w *world) replayed(c domain.Command) bool {
	if c.Validate() != nil {
		return false
	}
	l := w.lease
	owns := func(id string) bool {
		return l != nil && w.now.Before(l.ExpiresAt) && l.Kind == domain.LeaseAnalysis && l.ID == id
	}
	ms := func(t time.Time) int64 { return t.UnixMilli() }
	renewedAt := func(d time.Duration) bool {
		return ms(l.HeartbeatAt) == ms(w.now) && ms(l.ExpiresAt) == ms(w.now.Add(d))
	}
	fenced := func(job string) bool {
		return l != nil && w.now.Before(l.ExpiresAt) && l.Kind == domain.LeaseTracing && l.ID == job && l.Claimed
	}
	switch c := c.(type) {
	case domain.OpenAnalysis:
		return owns(c.LeaseID) && l.UserID == c.User.ID
	case domain.Heartbeat:
		return owns(c.LeaseID) && renewedAt(c.Duration)
	case domain.RenewJob:
		return fenced(c.JobID) && renewedAt(c.Duration) && w.m.Progress.FramesWritten == c.FramesWritten
	case domain.BeginTrace:
		return fenced(c.JobID) && renewedAt(c.Duration) && w.m.CleanBefore == c.CleanBefore &&
			w.m.Progress == domain.Progress{TotalFrames: c.TotalFrames} && w.m.Lease.PlanFrom == c.PlanFrom
	case domain.EditMarkers:
		ms := c.Markers
		if ms == nil {
			ms = []domain.Marker{}
		}
		return owns(c.LeaseID) && reflect.DeepEqual(w.settings.Markers, ms)
	case domain.EditTrim:
		return owns(c.LeaseID) && w.settings.Trim == c.Trim
	case domain.EditCaptureInterval:
		return owns(c.LeaseID) && w.settings.CaptureInterval == c.Interval
	case domain.StartTrace:
		return (l != nil && l.Kind == domain.LeaseTracing && l.ID == c.JobID) || w.lastJobID == c.JobID
	case domain.CompleteJob:
		return w.lastJobID == c.Job.ID && w.lastJobEnd == "CompleteJob"
	case domain.FailJob:
		return w.lastJobID == c.Job.ID && w.lastJobEnd == "FailJob" && w.lastSummary == c.SafeSummary() && c.SafeSummary() != ""
	}
	return false
}

// exec runs c against the movie, checks the outcome against the model and
// the per-command invariants, and on acceptance advances movie and model.
func (w *world) exec(action string, c domain.Command) (domain.Movie, error) {
	t := w.t
	t.Helper()
	before := CloneMovie(w.m)
	in := w.m
	want, noop := w.expect(c), w.replayed(c)
	if noop {
		want = ""
	}
	next, err := domain.Execute(&in, c)
	RequireSameMovie(t, in, before)
	got := domain.ErrorCode(err)
	if err != nil && got == "" {
		t.Fatalf("%s: %v is not a refusal", action, err)
	}
	if got != want {
		t.Fatalf("%s %+v at %v on %s:\n got %q (%v), the model expects %q (model lease %+v)",
			action, c, w.now, describe(before), got, err, want, w.lease)
	}
	w.stats.record(action, err == nil)
	if err != nil || noop {
		RequireSameMovie(t, next, before)
		return next, err
	}
	w.checkAccepted(action, c, before, next)
	w.model(c)
	w.m = next
	return next, nil
}

// checkAccepted checks what an accepted command may have done, against the
// movie before it (independently of the model).
func (w *world) checkAccepted(action string, c domain.Command, before, after domain.Movie) {
	t := w.t
	t.Helper()
	if after.Version != before.Version+1 {
		t.Fatalf("%s: Version %d -> %d", action, before.Version, after.Version)
	}
	if !after.UpdatedAt.Equal(w.now) {
		t.Fatalf("%s: UpdatedAt %v, now %v", action, after.UpdatedAt, w.now)
	}
	live := before.LiveLease(w.now)
	liveIs := func(kind domain.LeaseKind, id string) bool { return live != nil && live.Kind == kind && live.ID == id }

	if !reflect.DeepEqual(before.Settings, after.Settings) {
		var id string
		switch c := c.(type) {
		case domain.EditMarkers:
			id = c.LeaseID
		case domain.EditTrim:
			id = c.LeaseID
		case domain.EditCaptureInterval:
			id = c.LeaseID
		default:
			t.Fatalf("%s changed the settings", action)
		}
		if !liveIs(domain.LeaseAnalysis, id) {
			t.Fatalf("%s changed the settings with lease %s, live lease %+v", action, id, live)
		}
	}
	if before.CleanBefore != after.CleanBefore {
		switch c.(type) {
		case domain.EditTrim, domain.EditCaptureInterval, domain.EditMarkers:
			if after.CleanBefore != 0 {
				t.Fatalf("%s set CleanBefore to %d, want 0", action, after.CleanBefore)
			}
		case domain.BeginTrace, domain.CompleteJob:
		default:
			t.Fatalf("%s changed CleanBefore", action)
		}
	}
	tookOver := before.Lease != nil && before.Lease.Kind == domain.LeaseTracing && !before.Lease.LiveAt(w.now)
	if tookOver && before.Lease.ID != after.Lease.ID {
		want := before.Lease.Outcome(w.now, domain.StatusFailed, before.Progress.FramesWritten, staleSummary(*before.Lease))
		if after.LastJob == nil || !reflect.DeepEqual(*after.LastJob, want) {
			t.Fatalf("%s took over %+v but recorded the last job %+v, want %+v", action, *before.Lease, after.LastJob, want)
		}
	}
	if _, ok := c.(domain.CompleteJob); ok && after.CleanBefore != before.Settings.Trim.End {
		t.Fatalf("%s set CleanBefore to %d, want the trim's end %d (the end of every plan)", action, after.CleanBefore, before.Settings.Trim.End)
	}
	if before.Status != after.Status {
		switch c.(type) {
		case domain.StartTrace, domain.CompleteJob, domain.FailJob:
		case domain.OpenAnalysis:
			if !tookOver || after.Status != domain.StatusFailed {
				t.Fatalf("%s changed the status %s -> %s", action, before.Status, after.Status)
			}
		default:
			t.Fatalf("%s changed the status %s -> %s", action, before.Status, after.Status)
		}
	}
	if before.Lease != nil && after.Lease == nil {
		switch c.(type) {
		case domain.Release, domain.CompleteJob, domain.FailJob:
		default:
			t.Fatalf("%s removed the lease %+v", action, *before.Lease)
		}
	}
	switch c := c.(type) {
	case domain.Release:
		if !liveIs(domain.LeaseAnalysis, c.LeaseID) {
			t.Fatalf("release %s removed %+v", c.LeaseID, before.Lease)
		}
	case domain.StartTrace:
		if after.Status != domain.StatusTracing || after.Lease == nil || after.Lease.Kind != domain.LeaseTracing || after.Lease.ID != c.JobID {
			t.Fatalf("start: %s", describe(after))
		}
	case domain.ClaimSegment:
		w.claims[c.JobID]++
		if w.claims[c.JobID] > 1 {
			t.Fatalf("job %s claimed %d times", c.JobID, w.claims[c.JobID])
		}
	case domain.BeginTrace:
		w.requireFenced(action, c.JobID, live)
	case domain.RenewJob:
		w.requireFenced(action, c.JobID, live)
	case domain.CompleteJob:
		w.requireFenced(action, c.Job.ID, live)
		w.requireOutcome(action, c.Job.ID, *live, after, domain.StatusTraced, "")
	case domain.FailJob:
		w.requireFenced(action, c.Job.ID, live)
		w.requireOutcome(action, c.Job.ID, *live, after, domain.StatusFailed, domain.SanitizeSummary(c.Summary))
	}
}

func (w *world) requireFenced(action, job string, live *domain.Lease) {
	w.t.Helper()
	if live == nil || live.Kind != domain.LeaseTracing || live.ID != job || !live.Claimed || w.claims[job] != 1 {
		w.t.Fatalf("%s of job %s landed with live lease %+v (claims %d)", action, job, live, w.claims[job])
	}
}

// requireOutcome checks a terminal write's LastJob against the lease the
// job held before it.
func (w *world) requireOutcome(action, job string, held domain.Lease, after domain.Movie, status domain.Status, summary string) {
	t := w.t
	t.Helper()
	j := after.LastJob
	if j == nil || j.JobID != job || j.Status != status || j.UserID != held.UserID || j.UserName != held.UserName ||
		!j.StartedAt.Equal(held.AcquiredAt) || j.FromFrame != held.FromFrame || !j.FinishedAt.Equal(w.now) || j.FailureSummary != summary {
		t.Fatalf("%s recorded %+v for lease %+v", action, j, held)
	}
	if after.Lease != nil || after.Status != status {
		t.Fatalf("%s left lease %+v, status %s", action, after.Lease, after.Status)
	}
}

// check holds after every step, whatever happened.
func (w *world) check() {
	t := w.t
	t.Helper()
	m := w.m
	if !reflect.DeepEqual(m.Lease, w.lease) {
		t.Fatalf("stored lease %+v, the model has %+v", m.Lease, w.lease)
	}
	if !reflect.DeepEqual(m.Settings, w.settings) {
		t.Fatalf("stored settings %+v, the model has %+v", m.Settings, w.settings)
	}
	if m.Version != w.version {
		t.Fatalf("Version %d, the model has %d", m.Version, w.version)
	}
	if (m.Status == domain.StatusTracing) != (w.lastTrace == "StartTrace") {
		t.Fatalf("status %s after last trace command %q", m.Status, w.lastTrace)
	}
	wantStatus := map[string]domain.Status{"": domain.StatusReady, "StartTrace": domain.StatusTracing,
		"CompleteJob": domain.StatusTraced, "FailJob": domain.StatusFailed}[w.lastTrace]
	if m.Status != wantStatus {
		t.Fatalf("status %s, want %s after %q", m.Status, wantStatus, w.lastTrace)
	}
	if m.Lease != nil && m.Lease.Kind == domain.LeaseTracing && m.Status != domain.StatusTracing {
		t.Fatalf("a tracing lease on a movie with status %s", m.Status)
	}
	for job, n := range w.claims {
		if n > 1 {
			t.Fatalf("job %s claimed %d times", job, n)
		}
	}

	// At most one capability is honoured: probe every lease ID a browser
	// has used and every job ID with a side-effect-free Decide.
	honoured := 0
	for _, b := range w.browsers {
		for _, id := range b.ids {
			if hb := (domain.Heartbeat{LeaseID: id, Now: w.now, Duration: d}); domain.Decide(hb, &m) == nil || domain.Replayed(hb, &m) {
				honoured++
			}
		}
	}
	for job := range w.everJob {
		if domain.Decide(domain.ClaimSegment{JobID: job, Now: w.now, Duration: d}, &m) == nil ||
			domain.Decide(domain.JobFence{JobID: job, Now: w.now}, &m) == nil {
			honoured++
		}
	}
	live := m.LiveLease(w.now)
	// The one ID honoured is the live lease's, or the job's of a stale
	// tracing lease nobody claimed (its claim revives it).
	revivable := m.Lease != nil && m.Lease.Kind == domain.LeaseTracing && !m.Lease.Claimed
	if honoured > 1 || (honoured == 1) != (live != nil || revivable) {
		t.Fatalf("%d lease or job IDs are honoured with live lease %+v", honoured, live)
	}

	v := m.View(w.now)
	if (v.Status == domain.StatusTracing) != (live != nil && live.Kind == domain.LeaseTracing) {
		t.Fatalf("view status %s with live lease %+v", v.Status, live)
	}
	if (v.Holder != nil) != (live != nil) {
		t.Fatalf("view holder %+v with live lease %+v", v.Holder, live)
	}
	for _, j := range []*domain.JobRecord{m.LastJob, v.LastJob} {
		if j == nil {
			continue
		}
		if j.Status == domain.StatusFailed {
			RequireSafeSummary(t, j.FailureSummary)
		}
		if domain.SanitizeSummary(j.FailureSummary) != j.FailureSummary && j.FailureSummary != "" {
			t.Fatalf("stored summary %q is not sanitized", j.FailureSummary)
		}
	}
}

// actionStats counts outcomes per action over a whole property test, so a
// generator that never reaches an acceptance (or a refusal) shows up.
type actionStats struct {
	mu     sync.Mutex
	counts map[string][2]int // [refused, accepted]
}

func newActionStats() *actionStats { return &actionStats{counts: map[string][2]int{}} }

func (s *actionStats) record(action string, accepted bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.counts[action]
	if accepted {
		c[1]++
	} else {
		c[0]++
	}
	s.counts[action] = c
}

// bothOutcomes reports whether every recorded action was both accepted and
// refused at least once.
func (s *actionStats) bothOutcomes() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.counts {
		if c[0] == 0 || c[1] == 0 {
			return false
		}
	}
	return true
}

func (s *actionStats) requireBothOutcomes(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.counts))
	for name := range s.counts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := s.counts[name]
		t.Logf("%-10s accepted %5d refused %5d", name, c[1], c[0])
		if c[0] == 0 || c[1] == 0 {
			t.Errorf("%s was never %s: the generator is lopsided", name, map[bool]string{true: "refused", false: "accepted"}[c[0] == 0])
		}
	}
}

// staleSummary is the summary a takeover records for a stale job lease.
func staleSummary(l domain.Lease) string {
	if l.Claimed {
		return domain.StalledSummary
	}
	return domain.QueuedTooLongSummary
}

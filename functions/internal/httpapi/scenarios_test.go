package httpapi_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
)

// scenario is one browser story, run against DynamoDB Local through every
// transport: the net/http handler behind a real server, and the Lambda
// adapter fed API Gateway payload-2.0 events.
type scenario struct {
	name string
	run  func(t *testing.T, a *api)
}

func TestScenarios(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					t.Parallel()
					sc.run(t, newAPI(t, tr))
				})
			}
		})
	}
}

var (
	alice = [2]string{"user-alice", "Alice Liddell"}
	bob   = [2]string{"user-bob", "Bob Dylan"}
)

func (a *api) alice() *browser { return a.browser(alice[0], alice[1]) }
func (a *api) bob() *browser   { return a.browser(bob[0], bob[1]) }

var scenarios = []scenario{
	{"list and metadata show the live lock", func(t *testing.T, a *api) {
		id := a.createMovie()
		al := a.alice()

		var list httpapi.MovieList
		al.do("GET", "/movies", nil).want(200).decode(&list)
		s := findMovie(t, list, id)
		if s.Status != domain.StatusReady || s.Lock != nil {
			t.Fatalf("free movie listed as %+v", s)
		}
		d := al.get(id).want(200).detail()
		if d.ID != id || d.FrameCount != 300 || d.FrameRate != 30 || d.Trim != (httpapi.TrimView{Start: 0, End: 300}) ||
			d.CaptureInterval != 1 || len(d.Markers) != 1 || d.Lock != nil || d.LastJob != nil || d.Version != 1 {
			t.Fatalf("metadata %+v", d)
		}

		a.clock.Advance(1234 * time.Millisecond)
		al.open(id).want(201)
		want := httpapi.HolderView{Kind: domain.LeaseAnalysis, UserName: alice[1], StartedAt: "2026-12-02T12:00:01.234Z",
			LastActiveAt: "2026-12-02T12:00:01.234Z", ExpiresAt: "2026-12-02T12:15:01.234Z", Yours: true}
		al.do("GET", "/movies", nil).want(200).decode(&list)
		if s := findMovie(t, list, id); s.Lock == nil || *s.Lock != want || s.FrameCount != 300 {
			t.Fatalf("listed lock %+v (frame count %d), want %+v", s.Lock, s.FrameCount, want)
		}
		if d := al.get(id).want(200).detail(); d.Lock == nil || *d.Lock != want {
			t.Fatalf("metadata lock %+v, want %+v", d.Lock, want)
		}
		// Another user sees the same lock, not as theirs.
		notYours := want
		notYours.Yours = false
		if d := a.bob().get(id).want(200).detail(); d.Lock == nil || *d.Lock != notYours {
			t.Fatalf("Bob sees the lock as %+v, want %+v", d.Lock, notYours)
		}
	}},

	{"second browser gets 409 with the first's name and start time", func(t *testing.T, a *api) {
		id := a.createMovie()
		first, second := a.alice(), a.bob()
		var g httpapi.LeaseGrant
		first.open(id).want(201).decode(&g)
		if g.LeaseSeconds != 900 || g.ExpiresAt != "2026-12-02T12:15:00.000Z" || !domain.ValidLeaseID(g.LeaseID) {
			t.Fatalf("grant %+v", g)
		}
		a.clock.Advance(time.Minute)
		p := second.open(id).problem(409, domain.CodeLeaseHeld)
		want := httpapi.HolderView{Kind: domain.LeaseAnalysis, UserName: alice[1], StartedAt: "2026-12-02T12:00:00.000Z"}
		if p.Holder == nil || *p.Holder != want {
			t.Fatalf("holder %+v, want %+v", p.Holder, want)
		}
		// The same user in a second tab is a second browser too.
		a.alice().open(id).problem(409, domain.CodeLeaseHeld)
		// View-only: reads still work for the second browser.
		second.get(id).want(200)
		second.do("GET", "/movies/"+id+"/frames", nil).want(200)
		// Its writes are refused, with or without a lease ID.
		second.editInterval(id, 2).problem(428, domain.CodeLeaseRequired)
		second.lease = "0123456789abcdef0123456789abcdef"
		second.editInterval(id, 2).problem(409, domain.CodeLeaseHeld)
		if v := a.row(id).Version; v != 2 {
			t.Fatalf("version %d after refused writes, want 2", v)
		}
	}},

	{"edits without, with a stale and with a foreign lease ID", func(t *testing.T, a *api) {
		id := a.createMovie()
		al, bo := a.alice(), a.bob()
		al.open(id).want(201)
		mine := al.lease

		// No header: 428.
		noLease := a.alice()
		p := noLease.editTrim(id, 10, 20).problem(428, domain.CodeLeaseRequired)
		if p.Field != "leaseId" {
			t.Fatalf("field %q", p.Field)
		}
		// Not a lease ID at all: 422 naming the header.
		al.lease = "not-a-lease"
		if p := al.editTrim(id, 10, 20).problem(422, domain.CodeInvalid); p.Field != httpapi.HeaderLeaseID {
			t.Fatalf("field %q", p.Field)
		}
		// Foreign (someone else's / made up) while Alice holds: lease_held.
		al.lease = "ffffffffffffffffffffffffffffffff"
		al.editMarkers(id, markers(httpapi.MarkerView{ID: "a", X: 0.1, Y: 0.1})).problem(409, domain.CodeLeaseHeld)
		// The right one: 200 with the new metadata.
		al.lease = mine
		d := al.editTrim(id, 10, 20).want(200).detail()
		if d.Trim != (httpapi.TrimView{Start: 10, End: 20}) || d.Version != 3 {
			t.Fatalf("after trim: %+v", d)
		}
		d = al.editMarkers(id, markers(httpapi.MarkerView{ID: "a", Label: "left eye", X: 0.25, Y: 0.75}, httpapi.MarkerView{ID: "b", X: 1, Y: 0})).want(200).detail()
		if len(d.Markers) != 2 || d.Markers[0] != (httpapi.MarkerView{ID: "a", Label: "left eye", X: 0.25, Y: 0.75}) {
			t.Fatalf("after markers: %+v", d.Markers)
		}
		if d = al.editInterval(id, 5).want(200).detail(); d.CaptureInterval != 5 || d.Version != 5 {
			t.Fatalf("after interval: %+v", d)
		}
		// Stale: the lease expired and nobody took it: lease_lost.
		a.clock.Advance(leaseDuration)
		al.editInterval(id, 6).problem(409, domain.CodeLeaseLost)
		// Foreign: Bob's lease ID on Alice's page after Bob took over.
		bo.open(id).want(201)
		p = al.editInterval(id, 6).problem(409, domain.CodeLeaseHeld)
		if p.Holder == nil || p.Holder.UserName != bob[1] {
			t.Fatalf("holder %+v", p.Holder)
		}
		if v := a.row(id).Version; v != 6 {
			t.Fatalf("version %d, want 6 (open, 3 edits, open)", v)
		}
	}},

	{"invalid values are 422 and store nothing", func(t *testing.T, a *api) {
		id := a.createMovie()
		al := a.alice()
		al.open(id).want(201)
		v := a.row(id).Version
		for _, c := range []struct {
			r     *response
			field string
		}{
			{al.editTrim(id, 0, 301), "trim.end"},
			{al.editTrim(id, 20, 10), "trim"},
			{al.editInterval(id, 0), "captureInterval"},
			{al.editInterval(id, 10_001), "captureInterval"},
			{al.editMarkers(id, markers(httpapi.MarkerView{ID: "a", X: 1.5, Y: 0})), "markers[0].x"},
			{al.editMarkers(id, markers(httpapi.MarkerView{ID: "a", X: 0, Y: 0}, httpapi.MarkerView{ID: "a", X: 0, Y: 0})), "markers[1].id"},
			{al.trace(id, 300), "fromFrame"},
		} {
			if p := c.r.problem(422, domain.CodeInvalid); p.Field != c.field {
				t.Errorf("%s: field %q, want %q", c.r.req, p.Field, c.field)
			}
		}
		if got := a.row(id).Version; got != v {
			t.Fatalf("version %d after refused edits, want %d", got, v)
		}
	}},

	{"heartbeat extends only a live lease", func(t *testing.T, a *api) {
		id := a.createMovie()
		al := a.alice()
		al.open(id).want(201)
		a.clock.Advance(10 * time.Minute)
		var hb httpapi.LeaseRenewal
		al.heartbeat(id).want(200).decode(&hb)
		if hb.ExpiresAt != "2026-12-02T12:25:00.000Z" {
			t.Fatalf("heartbeat %+v", hb)
		}
		a.clock.Advance(10 * time.Minute) // 12:20, still live thanks to the heartbeat
		al.editInterval(id, 3).want(200)
		a.anonymousWithUser().heartbeat(id).problem(428, domain.CodeLeaseRequired)
		a.clock.Advance(5 * time.Minute) // 12:25: stale
		al.heartbeat(id).problem(409, domain.CodeLeaseLost)
	}},

	{"release: 204 also when there is nothing to release", func(t *testing.T, a *api) {
		id := a.createMovie()
		al := a.alice()
		al.open(id).want(201)
		al.release(id).want(204)
		if d := al.get(id).want(200).detail(); d.Lock != nil {
			t.Fatalf("lock %+v after release", d.Lock)
		}
		al.release(id).want(204) // again: nothing to release
		al.open(id).want(201)
		al.beacon(id).want(204) // sendBeacon on page exit
		if m := a.row(id); m.Lease != nil {
			t.Fatalf("lease %+v after beacon release", m.Lease.Kind)
		}
		al.beacon(id).want(204)
		// The beacon may also carry the lease in the header, and be empty.
		al.open(id).want(201)
		al.do("POST", "/movies/"+id+"/analysis-lease/release", nil, al.withLease()).want(204)
		if m := a.row(id); m.Lease != nil {
			t.Fatal("lease left after header release")
		}
		a.alice().release(id).problem(428, domain.CodeLeaseRequired)
		// Both sent: the Lease-Id header wins over the body (issue 21).
		al.open(id).want(201)
		al.doRaw("POST", "/movies/"+id+"/analysis-lease/release", `{"leaseId":"0123456789abcdef0123456789abcdef"}`,
			header("Content-Type", "text/plain;charset=UTF-8"), al.withLease()).want(204)
		if m := a.row(id); m.Lease != nil {
			t.Fatal("the body's lease ID won over the Lease-Id header")
		}
		// A movie that does not exist has nothing to release either.
		al.release("no-such-movie").want(204)
	}},

	{"the beacon release needs no identity, only the lease ID", func(t *testing.T, a *api) {
		id := a.createMovie()
		al := a.alice()
		al.open(id).want(201)
		anon := a.anonymous()
		anon.lease = "0123456789abcdef0123456789abcdef"
		anon.beacon(id).want(204)
		if m := a.row(id); m.Lease == nil {
			t.Fatal("a made-up lease ID released Alice's lease")
		}
		anon.lease = al.lease
		anon.beacon(id).want(204)
		if m := a.row(id); m.Lease != nil {
			t.Fatal("the beacon did not release")
		}
	}},

	{"trace start replaces the caller's analysis lease", func(t *testing.T, a *api) {
		id := a.createMovie()
		al := a.alice()
		al.open(id).want(201)
		a.clock.Advance(time.Minute)
		var ts httpapi.TraceStarted
		al.trace(id, 0).want(202).decode(&ts)
		if ts.Status != domain.StatusTracing || !domain.ValidLeaseID(ts.JobID) || ts.JobID == al.lease || ts.Version != 3 {
			t.Fatalf("trace started %+v", ts)
		}
		m := a.row(id)
		if m.Lease == nil || m.Lease.Kind != domain.LeaseTracing || m.Lease.ID != ts.JobID || m.Status != domain.StatusTracing {
			t.Fatalf("row after trace start: %+v", m.Lease)
		}
		d := al.get(id).want(200).detail()
		want := httpapi.HolderView{Kind: domain.LeaseTracing, UserName: alice[1], StartedAt: "2026-12-02T12:01:00.000Z",
			LastActiveAt: "2026-12-02T12:01:00.000Z", ExpiresAt: "2026-12-02T12:16:00.000Z", Yours: true}
		if d.Status != domain.StatusTracing || d.Lock == nil || *d.Lock != want {
			t.Fatalf("metadata while tracing: status %s lock %+v", d.Status, d.Lock)
		}
		// The old analysis lease is gone: edits and heartbeats are refused.
		p := al.editInterval(id, 2).problem(409, domain.CodeTracingInProgress)
		inProblem := httpapi.HolderView{Kind: want.Kind, UserName: want.UserName, StartedAt: want.StartedAt}
		if p.Holder == nil || *p.Holder != inProblem {
			t.Fatalf("holder %+v", p.Holder)
		}
		al.heartbeat(id).problem(409, domain.CodeLeaseLost)
		al.trace(id, 0).problem(409, domain.CodeTracingInProgress)
		a.bob().open(id).problem(409, domain.CodeTracingInProgress)
	}},

	{"an old page's release after trace start leaves the tracing lease", func(t *testing.T, a *api) {
		id := a.createMovie()
		al := a.alice()
		al.open(id).want(201)
		var ts httpapi.TraceStarted
		al.trace(id, 0).want(202).decode(&ts)
		before := a.row(id)
		al.release(id).want(204)
		al.beacon(id).want(204)
		after := a.row(id)
		if after.Lease == nil || after.Lease.ID != ts.JobID || after.Version != before.Version {
			t.Fatalf("release after trace start changed the row: %+v -> %+v", before.Lease, after.Lease)
		}
		if d := al.get(id).want(200).detail(); d.Lock == nil || d.Lock.Kind != domain.LeaseTracing {
			t.Fatalf("lock %+v", d.Lock)
		}
	}},

	{"a stale lease is taken over by the next opener", func(t *testing.T, a *api) {
		id := a.createMovie()
		al, bo := a.alice(), a.bob()
		al.open(id).want(201)
		a.clock.Advance(leaseDuration - time.Millisecond)
		bo.open(id).problem(409, domain.CodeLeaseHeld)
		a.clock.Advance(time.Millisecond) // exactly the expiry: stale
		if d := bo.get(id).want(200).detail(); d.Lock != nil {
			t.Fatalf("stale lease still shown: %+v", d.Lock)
		}
		bo.open(id).want(201)
		// Alice's page finds out on its next heartbeat, and sees who has it.
		p := al.heartbeat(id).problem(409, domain.CodeLeaseLost)
		want := httpapi.HolderView{Kind: domain.LeaseAnalysis, UserName: bob[1], StartedAt: "2026-12-02T12:15:00.000Z"}
		if p.Holder == nil || *p.Holder != want {
			t.Fatalf("holder %+v, want %+v", p.Holder, want)
		}
		al.editInterval(id, 2).problem(409, domain.CodeLeaseHeld)
		// Alice's old page leaving does not release Bob's lease.
		al.release(id).want(204)
		al.beacon(id).want(204)
		if m := a.row(id); m.Lease == nil || m.Lease.ID != bo.lease {
			t.Fatal("an old page's release removed the next browser's lease")
		}
		bo.editInterval(id, 2).want(200)
	}},

	{"401 without identity", func(t *testing.T, a *api) {
		id := a.createMovie()
		anon := a.anonymous()
		anon.lease = "0123456789abcdef0123456789abcdef"
		for _, r := range []*response{
			anon.do("GET", "/movies", nil),
			anon.get(id),
			anon.open(id),
			anon.heartbeat(id),
			anon.release(id),
			anon.editMarkers(id, markers()),
			anon.editTrim(id, 0, 10),
			anon.editInterval(id, 2),
			anon.trace(id, 0),
			anon.do("GET", "/movies/"+id+"/frames", nil),
		} {
			r.problem(401, httpapi.CodeUnauthenticated)
			if r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: 401 without WWW-Authenticate", r.req)
			}
		}
		if v := a.row(id).Version; v != 1 {
			t.Fatalf("version %d after unauthenticated requests", v)
		}
		// A development identity means nothing to the Lambda authenticator.
		if a.tr.name == "lambda" {
			anon.do("GET", "/movies/"+id, nil, header(httpapi.HeaderDevUser, "mallory"),
				header("X-Golambdaproxy-Apigw-Context", `{"authorizer":{"jwt":{"claims":{"sub":"mallory","name":"M"}}}}`)).
				problem(401, httpapi.CodeUnauthenticated)
		}
		anon.do("GET", "/openapi.json", nil).want(200)
	}},

	{"a trace needs no lease when none is live, and is refused while another browser edits", func(t *testing.T, a *api) {
		id := a.createMovie()
		al, bo := a.alice(), a.bob()
		bo.open(id).want(201)
		al.trace(id, 0).problem(409, domain.CodeLeaseHeld)
		bo.release(id).want(204)
		al.trace(id, 100).want(202)
		if m := a.row(id); m.Lease.FromFrame != 100 || m.Lease.UserName != alice[1] {
			t.Fatalf("lease %+v", m.Lease)
		}
		// No markers: 422 naming them.
		bare := a.createMovie(func(m *domain.Movie) { m.Settings.Markers = nil })
		if p := al.trace(bare, 0).problem(422, domain.CodeInvalid); p.Field != "markers" {
			t.Fatalf("field %q", p.Field)
		}
	}},

	{"frames: downloads name the movie, job and user, with time and label per point", func(t *testing.T, a *api) {
		id := a.createMovie(func(m *domain.Movie) {
			m.Settings.Trim = domain.Trim{Start: 10, End: 40}
			m.Settings.CaptureInterval = 5
		})
		al, bo := a.alice(), a.bob()
		al.open(id).want(201)
		var ts httpapi.TraceStarted
		al.trace(id, 10).want(202).decode(&ts)
		a.runJob(id, []domain.Frame{
			{Index: 10, Points: []domain.Point{{MarkerID: "m1", X: 0.25, Y: 0.75, PX: 160, PY: 360, Confidence: 0.9}}},
			{Index: 15, Points: []domain.Point{{MarkerID: "m1", Lost: true, Confidence: 0.1}}},
		}, true)
		m := a.row(id)
		if m.LastJob == nil || m.LastJob.JobID != ts.JobID || m.LastJob.UserName == "" {
			t.Fatalf("last job %+v", m.LastJob)
		}
		var page httpapi.FramePage
		bo.do("GET", "/movies/"+id+"/frames", nil).want(200).decode(&page)
		wantMovie := httpapi.DownloadMovie{ID: id, Title: m.Title, FrameRate: 30, Trim: httpapi.TrimView{Start: 10, End: 40}, CaptureInterval: 5}
		if page.Movie != wantMovie || page.Trace == nil || !reflect.DeepEqual(*page.Trace, httpapi.DownloadTrace{JobID: ts.JobID, UserName: m.LastJob.UserName}) {
			t.Fatalf("header %+v %+v", page.Movie, page.Trace)
		}
		if len(page.Frames) != 2 {
			t.Fatalf("frames %+v", page.Frames)
		}
		p := page.Frames[0].Points[0]
		if p.Label != "tip" || p.Time == nil || *p.Time != 10.0/30 || *p.PX != 160 || *p.PY != 360 {
			t.Fatalf("point %+v", p)
		}
		if l := page.Frames[1].Points[0]; l.Label != "tip" || *l.Time != 0.5 || l.PX != nil {
			t.Fatalf("lost point %+v", l)
		}
		csv := bo.do("GET", "/movies/"+id+"/frames?format=csv", nil).want(200)
		want := "# movie: " + m.Title + "\n# movieId: " + id + "\n# frameRate: 30\n# trim: 10-40\n# captureInterval: 5\n" +
			"# jobId: " + ts.JobID + "\n# user: " + m.LastJob.UserName + "\n" + "# units: x, y in fractions of the frame's width and height; px, py in pixels from the frame's top-left corner, y down; time in s\n# calibration: none\n" +
			"frame,time,markerId,label,x,y,px,py,confidence,lost,doubt\n" +
			"10,0.3333333333333333,m1,tip,0.25,0.75,160,360,0.9,false,\n15,0.5,m1,tip,,,,,0.1,true,\n"
		if got := string(csv.body); got != want {
			t.Fatalf("csv %q, want %q", got, want)
		}
	}},

	{"frames: pages, CSV, available while locked", func(t *testing.T, a *api) {
		id := a.createMovie()
		al, bo := a.alice(), a.bob()
		al.open(id).want(201)
		var empty httpapi.FramePage
		bo.do("GET", "/movies/"+id+"/frames", nil).want(200).decode(&empty)
		if len(empty.Frames) != 0 || empty.Next != nil {
			t.Fatalf("frames before any trace: %+v", empty)
		}
		var ts httpapi.TraceStarted
		al.trace(id, 0).want(202).decode(&ts)
		frames := []domain.Frame{
			{Index: 0, Points: []domain.Point{{MarkerID: "m1", X: 0.5, Y: 0.5}}},
			{Index: 1, Points: []domain.Point{{MarkerID: "m1", X: 0.51, Y: 0.49}}},
			{Index: 2, Points: []domain.Point{{MarkerID: "m1", Lost: true, Confidence: 0.25}}},
		}
		a.runJob(id, frames, false)

		// While the trace is live, another browser still reads results.
		var page httpapi.FramePage
		bo.do("GET", "/movies/"+id+"/frames?limit=2", nil).want(200).decode(&page)
		if len(page.Frames) != 2 || page.Next == nil || *page.Next != 2 || !reflect.DeepEqual(page.Frames[1].Points[0], httpapi.NewPointView(a.row(id), 1, domain.Point{MarkerID: "m1", X: 0.51, Y: 0.49})) {
			t.Fatalf("first page %+v", page)
		}
		r := bo.do("GET", "/movies/"+id+"/frames?from=2&limit=2", nil).want(200)
		r.decode(&page)
		if len(page.Frames) != 1 || page.Frames[0].Frame != 2 || page.Next != nil {
			t.Fatalf("last page %+v", page)
		}
		if strings.Contains(string(r.body), ts.JobID) {
			t.Fatal("frames expose the live job ID")
		}
		if !strings.Contains(string(r.body), `{"markerId":"m1","label":"tip","time":0.06666666666666667,"x":null,"y":null,"px":null,"py":null,"confidence":0.25,"lost":true}`) {
			t.Fatalf("a lost point is not shown without coordinates: %s", r.body)
		}
		csv := bo.do("GET", "/movies/"+id+"/frames?format=csv&limit=2", nil).want(200)
		if ct := csv.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
			t.Fatalf("content type %q", ct)
		}
		m := a.row(id)
		head := "# movie: " + m.Title + "\n# movieId: " + id + "\n# frameRate: 30\n# trim: 0-300\n# captureInterval: 1\n" +
			"# units: x, y in fractions of the frame's width and height; px, py in pixels from the frame's top-left corner, y down; time in s\n# calibration: none\n"
		if got, want := string(csv.body), head+"frame,time,markerId,label,x,y,px,py,confidence,lost,doubt\n0,0,m1,tip,0.5,0.5,0,0,0,false,\n1,0.03333333333333333,m1,tip,0.51,0.49,0,0,0,false,\n"; got != want {
			t.Fatalf("csv %q, want %q", got, want)
		}
		if link := csv.header.Get("Link"); link != `</movies/`+id+`/frames?format=csv&from=2&limit=2>; rel="next"` {
			t.Fatalf("Link %q", link)
		}
		accept := bo.do("GET", "/movies/"+id+"/frames", nil, header("Accept", "text/csv")).want(200)
		if !strings.HasPrefix(string(accept.body), head+"frame,time,markerId,label,x,y,px,py,confidence,lost,doubt\n") {
			t.Fatalf("Accept: text/csv gave %s", accept.body)
		}
		both := bo.do("GET", "/movies/"+id+"/frames", nil, header("Accept", "text/csv, application/json")).want(200)
		if !strings.HasPrefix(both.header.Get("Content-Type"), "application/json") {
			t.Fatalf("Accept listing JSON gave %s", both.header.Get("Content-Type"))
		}
		if page.Trace != nil || page.Movie.ID != id || page.Movie.Title != m.Title || page.Movie.FrameRate != 30 {
			t.Fatalf("download header while the trace runs: %+v %+v", page.Movie, page.Trace)
		}
		bo.do("GET", "/movies/no-such-movie/frames", nil).problem(404, domain.CodeNotFound)
		bo.do("GET", "/movies/"+id+"/frames?limit=0", nil).problem(422, domain.CodeInvalid)
	}},

	{"a finished trace shows its last job, a stalled one shows tracing_failed", func(t *testing.T, a *api) {
		done, stalled := a.createMovie(), a.createMovie()
		al := a.alice()
		al.trace(done, 0).want(202)
		job := a.runJob(done, []domain.Frame{{Index: 0, Points: []domain.Point{{MarkerID: "m1", X: 0.1, Y: 0.2}}}}, true)
		d := al.get(done).want(200).detail()
		if d.Status != domain.StatusTraced || d.Lock != nil || d.LastJob == nil || d.LastJob.JobID != job.ID ||
			d.LastJob.Status != domain.StatusTraced || d.LastJob.UserName != alice[1] || d.LastJob.Frames != 1 {
			t.Fatalf("finished: %+v %+v", d, d.LastJob)
		}

		al.trace(stalled, 0).want(202)
		a.clock.Advance(leaseDuration)
		d = al.get(stalled).want(200).detail()
		if d.Status != domain.StatusFailed || d.Lock != nil || d.LastJob == nil || d.LastJob.FailureSummary != domain.StalledSummary {
			t.Fatalf("stalled: %+v %+v", d, d.LastJob)
		}
		var list httpapi.MovieList
		al.do("GET", "/movies", nil).want(200).decode(&list)
		if s := findMovie(t, list, stalled); s.Status != domain.StatusFailed {
			t.Fatalf("stalled listed as %s", s.Status)
		}
		// And the next opener gets the movie; the takeover recorded the dead
		// job on the row (issue 12 item 10): it stays the last job, failed.
		al.open(stalled).want(201)
		d = al.get(stalled).want(200).detail()
		if d.Status != domain.StatusFailed || d.LastJob == nil || d.LastJob.Status != domain.StatusFailed ||
			d.LastJob.FailureSummary != domain.QueuedTooLongSummary || d.Lock == nil || d.Lock.Kind != domain.LeaseAnalysis {
			t.Fatalf("stalled, then opened: %+v %+v", d, d.LastJob)
		}
	}},

	// Issue 12 item 8: the lease ID is a capability, but edits, heartbeats
	// and a trace start are also bound to the lease's user. Bob presenting
	// Alice's valid, live lease ID is refused everywhere and changes
	// nothing; only the page's release (the beacon, which carries nothing
	// but the capability) works on the bare ID.
	{"another user's valid lease ID edits nothing and starts no trace; the beacon release works on it", func(t *testing.T, a *api) {
		id := a.createMovie()
		al := a.alice()
		al.open(id).want(201)
		thief := a.bob()
		thief.lease = al.lease // a valid, live capability, but not Bob's
		before := a.row(id)

		thief.editMarkers(id, []httpapi.MarkerView{{ID: "m9", Label: "stolen", X: 0.1, Y: 0.1}}).problem(409, domain.CodeLeaseHeld)
		thief.editTrim(id, 10, 20).problem(409, domain.CodeLeaseHeld)
		thief.editInterval(id, 7).problem(409, domain.CodeLeaseHeld)
		thief.trace(id, 0).problem(409, domain.CodeLeaseHeld)
		thief.heartbeat(id).problem(409, domain.CodeLeaseLost) // for Bob, there is no lease of his to renew
		if after := a.row(id); after.Version != before.Version || !reflect.DeepEqual(after.Settings, before.Settings) ||
			after.Status != before.Status || after.Lease == nil || *after.Lease != *before.Lease {
			t.Fatalf("another user's requests changed the row:\n before %+v\n after  %+v", before, after)
		}
		// Alice's own requests still work with it.
		al.editInterval(id, 2).want(200)
		al.heartbeat(id).want(200)

		thief.beacon(id).want(204)
		if m := a.row(id); m.Lease != nil {
			t.Fatalf("the beacon release with the bare capability left the lease %+v", *m.Lease)
		}
		al.editInterval(id, 3).problem(409, domain.CodeLeaseLost)
	}},

	{"unknown movies, routes and methods are problems", func(t *testing.T, a *api) {
		al := a.alice()
		al.get("no-such-movie").problem(404, domain.CodeNotFound)
		al.open("no-such-movie").problem(404, domain.CodeNotFound)
		al.get("bad%20id!").problem(404, domain.CodeNotFound)
		al.do("GET", "/nothing/here", nil).problem(404, domain.CodeNotFound)
		r := al.do("PATCH", "/movies/x", nil)
		r.problem(405, httpapi.CodeMethodNotAllowed)
		if allow := r.header.Get("Allow"); allow != "GET, DELETE" {
			t.Fatalf("Allow %q", allow)
		}
	}},
}

// anonymousWithUser is a signed-in browser that never opened Analyze.
func (a *api) anonymousWithUser() *browser { return a.alice() }

func findMovie(t *testing.T, l httpapi.MovieList, id string) httpapi.MovieSummary {
	t.Helper()
	for _, m := range l.Movies {
		if m.ID == id {
			return m
		}
	}
	t.Fatalf("movie %s not listed", id)
	return httpapi.MovieSummary{}
}

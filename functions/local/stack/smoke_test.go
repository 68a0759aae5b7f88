package stack

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// startTestStack starts the stack on the test's emulators with the sample
// movies, a fast tracer and unique table and queue names.
func startTestStack(t *testing.T, opts Options) *Stack {
	t.Helper()
	testenv.DynamoDB(t) // fails clearly without the emulators
	testenv.SQS(t)
	opts.DynamoDBEndpoint = envOrFail(t, "DYNAMODB_ENDPOINT")
	opts.SQSEndpoint = envOrFail(t, "SQS_ENDPOINT")
	opts.Prefix = testenv.UniqueName(t, "st")
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	s, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func envOrFail(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s not set: run the tests with `make test`", name)
	}
	return v
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// client calls the stack's HTTP API as one development user.
type client struct {
	t    *testing.T
	base string
	user string // "" sends no identity
	name string
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("not a JSON object (%v): %s", err, r.body)
	}
	return v
}

func (c client) call(method, path string, body any, header ...string) reply {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(c.t.Context(), method, strings.TrimSuffix(c.base, "/")+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.user != "" {
		req.Header.Set("X-Dev-User", c.user)
		req.Header.Set("X-Dev-User-Name", c.name)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return reply{res.StatusCode, res.Header, data}
}

// want calls and checks the status, and the problem code when code is set.
func (c client) want(status int, code, method, path string, body any, header ...string) reply {
	c.t.Helper()
	r := c.call(method, path, body, header...)
	if r.status != status {
		c.t.Fatalf("%s %s as %q: status %d, want %d: %s", method, path, c.name, r.status, status, r.body)
	}
	if code != "" {
		if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
			c.t.Fatalf("%s %s: Content-Type %q, want application/problem+json", method, path, ct)
		}
		if got := r.json(c.t)["code"]; got != code {
			c.t.Fatalf("%s %s: code %v, want %s: %s", method, path, got, code, r.body)
		}
	}
	return r
}

// TestSmokeEveryRoute is the scripted HTTP smoke test of make run's stack:
// every route of the API and the page, with the statuses a browser sees,
// through a whole trace (stream poller -> stream processor -> queue ->
// queue poller -> worker) and a failing one.
func TestSmokeEveryRoute(t *testing.T) {
	s := startTestStack(t, Options{FrameDelay: time.Millisecond, LeaseDuration: time.Minute, ProgressEvery: 100 * time.Millisecond})
	anon := client{t: t, base: s.URL}
	alice := client{t: t, base: s.URL, user: "dev-alice", name: "Alice"}
	bob := client{t: t, base: s.URL, user: "dev-bob", name: "Bob"}
	const id = "zebrafish-larva" // a sample movie with a marker
	mp := "/movies/" + id

	// The page.
	for path, typ := range map[string]string{"/": "text/html", "/app.js": "text/javascript", "/style.css": "text/css"} {
		r := anon.want(200, "", "GET", path, nil)
		if !strings.HasPrefix(r.header.Get("Content-Type"), typ) {
			t.Fatalf("GET %s: Content-Type %q", path, r.header.Get("Content-Type"))
		}
	}
	if r := anon.call("GET", "/", nil); !bytes.Contains(r.body, []byte(`<script type="module" src="/app.js"`)) {
		t.Fatalf("the page does not load app.js: %s", r.body)
	}

	// The OpenAPI document lists every route under the same paths as in AWS.
	doc := anon.want(200, "", "GET", "/openapi.json", nil).json(t)
	paths, _ := doc["paths"].(map[string]any)
	for _, p := range []string{"/movies", "/movies/{id}", "/movies/{id}/analysis-lease", "/movies/{id}/analysis-lease/release",
		"/movies/{id}/markers", "/movies/{id}/trim", "/movies/{id}/capture-interval", "/movies/{id}/traces", "/movies/{id}/frames"} {
		if _, ok := paths[p]; !ok {
			t.Errorf("openapi.json has no path %s", p)
		}
	}

	// Reads.
	anon.want(401, "unauthenticated", "GET", "/movies", nil)
	list := alice.want(200, "", "GET", "/movies", nil).json(t)
	var ids []string
	for _, m := range list["movies"].([]any) {
		ids = append(ids, m.(map[string]any)["id"].(string))
	}
	slices.Sort(ids)
	if want := []string{"damaged-footage", "fly-courtship", "mouse-open-field", "zebrafish-larva"}; !slices.Equal(ids, want) {
		t.Fatalf("movies %v, want the samples %v", ids, want)
	}
	alice.want(404, "not_found", "GET", "/movies/no-such-movie", nil)
	alice.want(404, "not_found", "GET", "/movies/bad!id", nil)
	if m := alice.want(200, "", "GET", mp, nil).json(t); m["lock"] != nil || m["status"] != "ready" {
		t.Fatalf("fresh movie %v", m)
	}
	alice.want(405, "method_not_allowed", "PATCH", "/movies", nil)

	// Analysis lease: Alice opens, Bob is refused with her name.
	grant := alice.want(201, "", "POST", mp+"/analysis-lease", nil).json(t)
	lease, _ := grant["leaseId"].(string)
	if len(lease) != 32 || grant["leaseSeconds"] != 60.0 {
		t.Fatalf("grant %v", grant)
	}
	held := bob.want(409, "lease_held", "POST", mp+"/analysis-lease", nil).json(t)
	if h, _ := held["holder"].(map[string]any); h["userName"] != "Alice" || h["kind"] != "analysis" || h["startedAt"] == "" {
		t.Fatalf("holder %v", held["holder"])
	}
	if m := bob.want(200, "", "GET", mp, nil).json(t); m["lock"].(map[string]any)["userName"] != "Alice" {
		t.Fatalf("Bob's metadata shows lock %v", m["lock"])
	}
	alice.want(200, "", "PUT", mp+"/analysis-lease", nil, "Lease-Id", lease)
	alice.want(428, "lease_required", "PUT", mp+"/analysis-lease", nil)

	// Edits need the lease.
	markers := map[string]any{"markers": []map[string]any{{"id": "m1", "label": "Head", "x": 0.4, "y": 0.5}, {"id": "m2", "label": "Tail", "x": 0.6, "y": 0.5}}}
	bob.want(428, "lease_required", "PUT", mp+"/markers", markers)
	bob.want(409, "lease_held", "PUT", mp+"/markers", markers, "Lease-Id", strings.Repeat("ab", 16))
	alice.want(200, "", "PUT", mp+"/markers", markers, "Lease-Id", lease)
	alice.want(200, "", "PUT", mp+"/trim", map[string]int{"start": 10, "end": 110}, "Lease-Id", lease)
	alice.want(422, "invalid_input", "PUT", mp+"/trim", map[string]int{"start": 0, "end": 100000}, "Lease-Id", lease)
	alice.want(400, "malformed_request", "PUT", mp+"/trim", `{"start": "0"}`, "Lease-Id", lease)
	m := alice.want(200, "", "PUT", mp+"/capture-interval", map[string]int{"captureInterval": 4}, "Lease-Id", lease).json(t)
	if m["captureInterval"] != 4.0 || len(m["markers"].([]any)) != 2 {
		t.Fatalf("after the edits %v", m)
	}

	// A trace replaces the analysis lease; the old page's release cannot
	// remove the tracing lease.
	started := alice.want(202, "", "POST", mp+"/traces", map[string]int{"fromFrame": 10}, "Lease-Id", lease).json(t)
	job, _ := started["jobId"].(string)
	alice.want(409, "tracing_in_progress", "PUT", mp+"/markers", markers, "Lease-Id", lease)
	bob.want(409, "tracing_in_progress", "POST", mp+"/analysis-lease", nil)
	anon.want(204, "", "POST", mp+"/analysis-lease/release", `{"leaseId":"`+lease+`"}`)
	if m := alice.want(200, "", "GET", mp, nil).json(t); m["status"] != "tracing" && m["status"] != "traced" {
		t.Fatalf("after the stale release: %v", m)
	}
	done := waitStatus(t, alice, mp, "traced")
	if j := done["lastJob"].(map[string]any); j["jobId"] != job || j["frames"] != 25.0 || j["userName"] != "Alice" {
		t.Fatalf("last job %v (want 25 frames: [10, 110) every 4th)", j)
	}

	// Frames: JSON pages, CSV by query or Accept.
	page := bob.want(200, "", "GET", mp+"/frames?from=0&limit=10", nil).json(t)
	if len(page["frames"].([]any)) != 10 || page["next"] == nil {
		t.Fatalf("first page %v", page)
	}
	all := bob.want(200, "", "GET", mp+"/frames?limit=1000", nil).json(t)
	if n := len(all["frames"].([]any)); n != 25 || all["next"] != nil {
		t.Fatalf("%d frames, next %v", n, all["next"])
	}
	for _, r := range []reply{bob.want(200, "", "GET", mp+"/frames?format=csv&limit=1000", nil),
		bob.want(200, "", "GET", mp+"/frames?limit=1000", nil, "Accept", "text/csv")} {
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(string(r.body)), "\n") {
			if !strings.HasPrefix(l, "# ") { // the download header's comment lines
				lines = append(lines, l)
			}
		}
		if !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") || !strings.HasPrefix(string(r.body), "# movie: ") || lines[0] != "frame,time,markerId,label,x,y,px,py,confidence,lost,doubt" || len(lines) != 1+25*2 {
			t.Fatalf("CSV %q, %d lines: %s", r.header.Get("Content-Type"), len(lines), lines[0])
		}
	}
	bob.want(422, "invalid_input", "GET", mp+"/frames?limit=0", nil)
	bob.want(404, "not_found", "GET", "/movies/no-such-movie/frames", nil)

	// Release: by header, and by beacon (no identity).
	lease2 := alice.want(201, "", "POST", mp+"/analysis-lease", nil).json(t)["leaseId"].(string)
	alice.want(204, "", "DELETE", mp+"/analysis-lease", nil, "Lease-Id", lease2)
	lease3 := bob.want(201, "", "POST", mp+"/analysis-lease", nil).json(t)["leaseId"].(string)
	anon.want(204, "", "POST", mp+"/analysis-lease/release", `{"leaseId":"`+lease3+`"}`)
	if m := alice.want(200, "", "GET", mp, nil).json(t); m["lock"] != nil {
		t.Fatalf("after the releases the lock is %v", m["lock"])
	}

	// The failing sample: tracing_failed with its safe summary.
	fp := "/movies/" + FailingMovieID
	fl := bob.want(201, "", "POST", fp+"/analysis-lease", nil).json(t)["leaseId"].(string)
	bob.want(202, "", "POST", fp+"/traces", map[string]int{"fromFrame": 0}, "Lease-Id", fl)
	failed := waitStatus(t, bob, fp, "tracing_failed")
	if j := failed["lastJob"].(map[string]any); j["failureSummary"] != "The tracer failed at frame 60 (an injected test failure)." {
		t.Fatalf("failed job %v", j)
	}

	// The stream processor ran on the real stream: the audit trail holds
	// the started and completed events of Alice's job.
	out, err := s.DynamoDB.Scan(t.Context(), &dynamodb.ScanInput{TableName: &s.Tables.Audit})
	if err != nil {
		t.Fatal(err)
	}
	var audit []struct {
		MovieID string `dynamodbav:"movieId"`
		Type    string `dynamodbav:"type"`
		JobID   string `dynamodbav:"jobId"`
	}
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &audit); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, a := range audit {
		if a.MovieID == id && a.JobID == job {
			types = append(types, a.Type)
		}
	}
	slices.Sort(types)
	if !slices.Equal(types, []string{"movie.tracing.completed", "movie.tracing.started"}) {
		t.Fatalf("audit of the job: %v (all: %+v)", types, audit)
	}
}

func waitStatus(t *testing.T, c client, path, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		m := c.want(200, "", "GET", path, nil).json(t)
		if m["status"] == status {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never became %s: %v", path, status, m)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestStartRefusesANonLoopbackAddress(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "192.168.1.2:80", "example.com:80"} {
		_, err := Start(t.Context(), Options{DynamoDBEndpoint: "http://127.0.0.1:1", SQSEndpoint: "http://127.0.0.1:1", Addr: addr})
		if err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("Start on %s: %v, want a loopback refusal", addr, err)
		}
	}
}

func TestStartSeedsIdempotently(t *testing.T) {
	s := startTestStack(t, Options{})
	// A start that stopped between a sample's ingest and its markers: the
	// row is ready without them (issue 20). The next start places them.
	lease, now := token.New(), time.Now()
	for _, c := range []domain.Command{
		domain.OpenAnalysis{LeaseID: lease, User: domain.User{ID: "u-t", Name: "T"}, Now: now, Duration: time.Minute},
		domain.EditMarkers{LeaseID: lease, Now: now, Markers: []domain.Marker{}},
		domain.Release{LeaseID: lease, Now: now},
	} {
		if _, err := s.Movies.Commit(t.Context(), "zebrafish-larva", c); err != nil {
			t.Fatalf("%T: %v", c, err)
		}
	}
	// A second stack on the same tables keeps what is there.
	again, err := Start(t.Context(), Options{DynamoDBEndpoint: envOrFail(t, "DYNAMODB_ENDPOINT"), SQSEndpoint: envOrFail(t, "SQS_ENDPOINT"),
		Prefix: strings.TrimSuffix(s.Tables.Movies, "-movies"), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Stop()
	movies, malformed, err := again.Movies.List(t.Context())
	if err != nil || len(movies) != len(SampleMovies(time.Now())) || len(malformed) != 0 {
		t.Fatalf("%d movies, %d malformed (%v)", len(movies), len(malformed), err)
	}
	if m, err := again.Movies.Get(t.Context(), "zebrafish-larva"); err != nil || len(m.Settings.Markers) != 1 || m.Status != domain.StatusReady {
		t.Fatalf("the sample's markers were not placed again: %+v %v", m.Settings.Markers, err)
	}
}

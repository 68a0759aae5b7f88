package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

const leaseDuration = domain.DefaultLeaseDuration

// --- DynamoDB Local --------------------------------------------------------

// fixture is one set of tables on DynamoDB Local shared by the package's
// tests; each test works on movies of its own.
type fixture struct {
	client *dynamodb.Client
	tables dynamo.Tables
	movies *dynamo.MovieStore
	frames *dynamo.FrameStore
	audit  *dynamo.AuditReader
	// files is a bucket on the S3 emulator (no notification: tests play
	// the ingest themselves).
	files *s3store.Store
}

var (
	fixtureOnce sync.Once
	shared      *fixture
)

func tables(tb testing.TB) *fixture {
	tb.Helper()
	fixtureOnce.Do(func() {
		client := testenv.DynamoDB(tb)
		t := testenv.NewTables(tb, client)
		bucket := strings.ToLower(strings.ReplaceAll(testenv.UniqueName(tb, "httpapi"), "_", "-"))
		s3client := testenv.S3(tb)
		if err := s3store.CreateBucket(context.Background(), s3client, bucket, "", ""); err != nil {
			tb.Fatal(err)
		}
		files, err := s3store.New(s3store.Options{Client: s3client, Bucket: bucket})
		if err != nil {
			tb.Fatal(err)
		}
		shared = &fixture{client: client, tables: t, files: files,
			movies: dynamo.NewMovieStore(client, t.Movies), frames: dynamo.NewFrameStore(client, t.Frames),
			audit: dynamo.NewAuditReader(client, t.Audit)}
	})
	if shared == nil {
		tb.Fatal("no tables on DynamoDB Local (see the first failing test)")
	}
	return shared
}

// clock is the handler's controllable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// --- transports ------------------------------------------------------------

// roundTrip sends one request as user (nil: no identity) and returns the
// response as the browser would see it.
type roundTrip func(t testing.TB, req *http.Request, user *domain.User) *http.Response

// transport is one way of running the handler: a real net/http server, or
// the Lambda adapter fed API Gateway HTTP API (payload 2.0) events.
type transport struct {
	name string
	// env is what httpapi.ChooseAuthenticator sees.
	env   map[string]string
	serve func(t testing.TB, h http.Handler) roundTrip
}

var transports = []transport{
	{name: "net-http", env: map[string]string{httpapi.EnvDevAuth: "1"}, serve: serveHTTP},
	{name: "lambda", env: map[string]string{httpapi.EnvLambdaFunctionName: "api", httpapi.EnvLambdaRuntimeAPI: "127.0.0.1:9001"}, serve: serveLambda},
}

// serveHTTP runs the handler behind a real HTTP server; identity comes from
// the development headers.
func serveHTTP(t testing.TB, h http.Handler) roundTrip {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	// The browser sees the API's own redirects (frame images), as the
	// Lambda transport does.
	srv.Client().CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return func(t testing.TB, req *http.Request, user *domain.User) *http.Response {
		t.Helper()
		out := req.Clone(req.Context())
		u := *req.URL
		out.URL = &u
		out.URL.Scheme, out.URL.Host = "http", strings.TrimPrefix(srv.URL, "http://")
		out.RequestURI = ""
		if req.GetBody != nil {
			out.Body, _ = req.GetBody()
		}
		if user != nil {
			out.Header.Set(httpapi.HeaderDevUser, user.ID)
			out.Header.Set(httpapi.HeaderDevUserName, user.Name)
		}
		resp, err := srv.Client().Do(out)
		if err != nil {
			t.Fatalf("%s %s: %v", req.Method, req.URL, err)
		}
		return resp
	}
}

// serveLambda runs the handler through httpadapter.NewV2(h).ProxyWithContext,
// as functions/api does, with the event API Gateway sends for the stack's
// "/{proxy+}" route and JWT authorizer. The event and the response go
// through JSON, as they do between Lambda and the function.
func serveLambda(t testing.TB, h http.Handler) roundTrip {
	adapter := httpadapter.NewV2(h)
	return func(t testing.TB, req *http.Request, user *domain.User) *http.Response {
		t.Helper()
		ev := lambdaEvent(t, req, user)
		wire, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var in events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(wire, &in); err != nil {
			t.Fatal(err)
		}
		ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "lambda-" + token.New()[:12]})
		out, err := adapter.ProxyWithContext(ctx, in)
		if err != nil {
			t.Fatalf("%s %s: adapter: %v", req.Method, req.URL, err)
		}
		wire, err = json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(wire, &resp); err != nil {
			t.Fatal(err)
		}
		return httpResponse(t, req, resp)
	}
}

// lambdaEvent is the payload-2.0 event of req: lower-case headers, repeated
// headers joined with commas, cookies apart, the authorizer's claims.
func lambdaEvent(t testing.TB, req *http.Request, user *domain.User) events.APIGatewayV2HTTPRequest {
	t.Helper()
	var body []byte
	if req.GetBody != nil {
		rc, _ := req.GetBody()
		body, _ = io.ReadAll(rc)
	}
	headers := map[string]string{
		"host":              "r2d2c3po.execute-api.us-east-1.amazonaws.com",
		"user-agent":        "tracinglocks-test",
		"x-forwarded-proto": "https",
		"content-length":    fmt.Sprint(len(body)),
	}
	if user != nil {
		headers["authorization"] = "Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln"
	}
	for k, vs := range req.Header {
		headers[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	query := map[string]string{}
	for k, vs := range req.URL.Query() {
		query[k] = strings.Join(vs, ",")
	}
	reqID := "req-" + token.New()[:12]
	ev := events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              req.Method + " /{proxy+}",
		RawPath:               req.URL.EscapedPath(),
		RawQueryString:        req.URL.RawQuery,
		Headers:               headers,
		QueryStringParameters: query,
		PathParameters:        map[string]string{"proxy": strings.TrimPrefix(req.URL.Path, "/")},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     req.Method + " /{proxy+}",
			AccountID:    "123456789012",
			Stage:        "$default",
			RequestID:    reqID,
			APIID:        "r2d2c3po",
			DomainName:   "r2d2c3po.execute-api.us-east-1.amazonaws.com",
			DomainPrefix: "r2d2c3po",
			Time:         "02/Dec/2026:12:00:00 +0000",
			TimeEpoch:    t0.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: req.Method, Path: req.URL.Path, Protocol: "HTTP/1.1",
				SourceIP: "203.0.113.7", UserAgent: "tracinglocks-test",
			},
		},
	}
	if len(query) == 0 {
		ev.QueryStringParameters = nil
	}
	if user != nil {
		claims := map[string]string{
			"sub": user.ID, "iss": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_test",
			"token_use": "id", "auth_time": "1796212800", "exp": "1796216400",
		}
		if user.Name != "" {
			claims["name"] = user.Name
		}
		ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
			JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: claims, Scopes: nil},
		}
	}
	// API Gateway base64-encodes bodies it does not treat as text.
	ct := strings.ToLower(req.Header.Get("Content-Type"))
	if len(body) > 0 && (!utf8.Valid(body) || !(strings.Contains(ct, "json") || strings.HasPrefix(ct, "text/"))) {
		ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
	} else {
		ev.Body = string(body)
	}
	return ev
}

func httpResponse(t testing.TB, req *http.Request, r events.APIGatewayV2HTTPResponse) *http.Response {
	t.Helper()
	body := []byte(r.Body)
	if r.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(r.Body); err != nil {
			t.Fatal(err)
		}
	}
	h := http.Header{}
	for k, v := range r.Headers {
		h.Set(k, v)
	}
	for k, vs := range r.MultiValueHeaders {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return &http.Response{StatusCode: r.StatusCode, Header: h, Body: io.NopCloser(bytes.NewReader(body)), Request: req}
}

// --- the API under test ----------------------------------------------------

// api is one handler on the shared tables, with its own clock and logs.
type api struct {
	t     *testing.T
	tr    transport
	fx    *fixture
	clock *clock
	logs  *testenv.LogBuffer
	rt    roundTrip

	mu        sync.Mutex
	exchanges []exchange
}

// exchange is one request and its response, kept for the leak checks.
type exchange struct {
	method, path string
	status       int
	header       http.Header
	body         []byte
}

func newAPI(t *testing.T, tr transport) *api {
	t.Helper()
	return newAPIOn(t, tr, tables(t))
}

// newAPIOn is newAPI on the given tables; tune adjusts the handler's Config.
func newAPIOn(t *testing.T, tr transport, fx *fixture, tune ...func(*httpapi.Config)) *api {
	t.Helper()
	a := &api{t: t, tr: tr, fx: fx, clock: &clock{t: t0}, logs: &testenv.LogBuffer{}}
	auth, err := httpapi.ChooseAuthenticator(func(k string) string { return tr.env[k] })
	if err != nil {
		t.Fatal(err)
	}
	c := httpapi.Config{
		Movies: fx.movies, Frames: fx.frames, History: fx.audit, Auth: auth, Now: a.clock.Now,
		LeaseDuration: leaseDuration, Logger: logging.New(a.logs, slog.LevelDebug),
		Files: fx.files, Catalog: fx.movies, MaxUploadBytes: testMaxUpload,
	}
	for _, f := range tune {
		f(&c)
	}
	h, err := httpapi.New(c)
	if err != nil {
		t.Fatal(err)
	}
	a.rt = tr.serve(t, h)
	return a
}

// movieID returns a movie ID unique to this test run.
func movieID(t testing.TB) string {
	return "mv-" + token.New()[:20]
}

// createMovie stores a ready 300-frame movie with one marker.
func (a *api) createMovie(mutate ...func(*domain.Movie)) string {
	a.t.Helper()
	return createMovie(a.t, a.fx, mutate...)
}

func createMovie(tb testing.TB, fx *fixture, mutate ...func(*domain.Movie)) string {
	tb.Helper()
	m, err := domain.NewMovie(movieID(tb), "Movie "+token.New()[:6], 300, 30, t0)
	if err != nil {
		tb.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "m1", Label: "tip", X: 0.5, Y: 0.5}}
	for _, f := range mutate {
		f(&m)
	}
	if err := fx.movies.Create(context.Background(), m); err != nil {
		tb.Fatalf("create movie: %v", err)
	}
	return m.ID
}

// row reads the stored movie.
func (a *api) row(id string) domain.Movie {
	a.t.Helper()
	m, err := a.fx.movies.Get(context.Background(), id)
	if err != nil {
		a.t.Fatalf("get movie %s: %v", id, err)
	}
	return m
}

// browser is one Analyze page: a user and, once granted, its lease.
type browser struct {
	a     *api
	user  *domain.User
	lease string
}

func (a *api) browser(id, name string) *browser {
	return &browser{a: a, user: &domain.User{ID: id, Name: name}}
}

// anonymous is a caller without identity.
func (a *api) anonymous() *browser { return &browser{a: a} }

// response is what a browser got.
type response struct {
	t      testing.TB
	req    string
	status int
	header http.Header
	body   []byte
}

// reqOpt adjusts a request.
type reqOpt func(*http.Request)

func header(k, v string) reqOpt { return func(r *http.Request) { r.Header.Add(k, v) } }

// withLease sends the browser's lease in Lease-Id.
func (b *browser) withLease() reqOpt { return header(httpapi.HeaderLeaseID, b.lease) }

// do sends a request. body: nil, a string (sent as is) or a value (JSON,
// with Content-Type application/json).
func (b *browser) do(method, path string, body any, opts ...reqOpt) *response {
	b.a.t.Helper()
	if body != nil {
		opts = append([]reqOpt{header("Content-Type", "application/json")}, opts...)
	}
	return b.doRaw(method, path, body, opts...)
}

// doRaw is do without a default Content-Type.
func (b *browser) doRaw(method, path string, body any, opts ...reqOpt) *response {
	t := b.a.t
	t.Helper()
	var raw []byte
	switch v := body.(type) {
	case nil:
	case string:
		raw = []byte(v)
	case []byte:
		raw = v
	default:
		var err error
		if raw, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
	for _, o := range opts {
		o(req)
	}
	resp := b.a.rt(t, req, b.user)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := &response{t: t, req: method + " " + path, status: resp.StatusCode, header: resp.Header, body: data}
	checkSpec(t, req, r)
	b.a.mu.Lock()
	b.a.exchanges = append(b.a.exchanges, exchange{method: method, path: path, status: r.status, header: r.header, body: data})
	b.a.mu.Unlock()
	return r
}

// want requires the status and returns the response.
func (r *response) want(status int) *response {
	r.t.Helper()
	if r.status != status {
		r.t.Fatalf("%s: status %d, want %d; body: %s", r.req, r.status, status, r.body)
	}
	return r
}

// decode decodes the JSON body into v.
func (r *response) decode(v any) {
	r.t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		r.t.Fatalf("%s: decode %s: %v", r.req, r.body, err)
	}
}

// problem requires a problem response with status and code.
func (r *response) problem(status int, code domain.Code) httpapi.Problem {
	r.t.Helper()
	r.want(status)
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		r.t.Fatalf("%s: content type %q, want application/problem+json", r.req, ct)
	}
	var p httpapi.Problem
	r.decode(&p)
	if p.Code != code || p.Status != status || p.Type != httpapi.ProblemTypeBase+string(code) {
		r.t.Fatalf("%s: problem %+v, want code %s status %d", r.req, p, code, status)
	}
	// People read the title and detail: no internal status, code or field.
	if names := httpapi.InternalNames(p.Title + " " + p.Detail); len(names) > 0 {
		r.t.Fatalf("%s: problem %q / %q names %q", r.req, p.Title, p.Detail, names)
	}
	return p
}

// detail decodes a metadata response.
func (r *response) detail() httpapi.MovieDetail {
	r.t.Helper()
	var d httpapi.MovieDetail
	r.decode(&d)
	return d
}

// Browser actions.

func (b *browser) open(id string) *response {
	b.a.t.Helper()
	r := b.do("POST", "/movies/"+id+"/analysis-lease", nil)
	if r.status == http.StatusCreated {
		var g httpapi.LeaseGrant
		r.decode(&g)
		b.lease = g.LeaseID
	}
	return r
}

func (b *browser) get(id string) *response {
	b.a.t.Helper()
	return b.do("GET", "/movies/"+id, nil)
}

func (b *browser) heartbeat(id string) *response {
	b.a.t.Helper()
	return b.do("PUT", "/movies/"+id+"/analysis-lease", nil, b.withLease())
}

func (b *browser) release(id string) *response {
	b.a.t.Helper()
	return b.do("DELETE", "/movies/"+id+"/analysis-lease", nil, b.withLease())
}

// beacon is navigator.sendBeacon(url, JSON.stringify({leaseId})): a
// text/plain body and no Lease-Id header.
func (b *browser) beacon(id string) *response {
	b.a.t.Helper()
	return b.doRaw("POST", "/movies/"+id+"/analysis-lease/release", `{"leaseId":"`+b.lease+`"}`,
		header("Content-Type", "text/plain;charset=UTF-8"))
}

func (b *browser) editMarkers(id string, markers []httpapi.MarkerView) *response {
	b.a.t.Helper()
	return b.do("PUT", "/movies/"+id+"/markers", map[string]any{"markers": markers}, b.withLease())
}

func (b *browser) editTrim(id string, start, end int) *response {
	b.a.t.Helper()
	return b.do("PUT", "/movies/"+id+"/trim", map[string]int{"start": start, "end": end}, b.withLease())
}

func (b *browser) editInterval(id string, n int) *response {
	b.a.t.Helper()
	return b.do("PUT", "/movies/"+id+"/capture-interval", map[string]int{"captureInterval": n}, b.withLease())
}

func (b *browser) trace(id string, from int) *response {
	b.a.t.Helper()
	return b.do("POST", "/movies/"+id+"/traces", map[string]int{"fromFrame": from}, b.withLease())
}

// --- the worker's side, for frames and finished jobs ----------------------

// runJob plays the worker for the movie's live tracing job: claim, write
// the frames (fenced), and complete when finish is set.
func (a *api) runJob(id string, frames []domain.Frame, finish bool) domain.Lease {
	a.t.Helper()
	ctx := context.Background()
	m := a.row(id)
	if m.Lease == nil || m.Lease.Kind != domain.LeaseTracing {
		a.t.Fatalf("movie %s has no tracing lease", id)
	}
	job := *m.Lease
	now := a.clock.Now()
	claimed, err := a.fx.movies.Commit(ctx, id, domain.ClaimSegment{JobID: job.ID, Now: now, Duration: leaseDuration})
	if err != nil {
		a.t.Fatalf("claim: %v", err)
	}
	fence := domain.JobFence{JobID: job.ID, Now: now}
	if len(frames) > 0 {
		for i := range frames {
			frames[i].JobID = job.ID
		}
		check, err := a.fx.movies.FenceCheck(id, fence)
		if err != nil {
			a.t.Fatal(err)
		}
		if err := a.fx.frames.WriteFenced(ctx, id, check, frames, nil); err != nil {
			a.t.Fatalf("write frames: %v", err)
		}
	}
	if finish {
		if _, err := a.fx.movies.Commit(ctx, id, domain.CompleteJob{Job: *claimed.Lease, Now: now,
			FramesWritten: len(frames)}); err != nil {
			a.t.Fatalf("complete: %v", err)
		}
	}
	return *claimed.Lease
}

func markers(ms ...httpapi.MarkerView) []httpapi.MarkerView { return ms }

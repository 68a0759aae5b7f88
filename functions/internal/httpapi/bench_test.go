package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/schema"
)

// BenchmarkRoutes measures one request through the handler against
// DynamoDB Local, with the DynamoDB requests it costs, and one metadata
// read through the Lambda adapter:
//
//	DYNAMODB_ENDPOINT=... go test -run '^$' -bench Routes -benchtime 300x ./functions/internal/httpapi
func BenchmarkRoutes(b *testing.B) {
	c := newCounted(b, map[string]string{httpapi.EnvDevAuth: "1"})
	id := createMovie(b, tables(b))
	status, body := c.serve(b, "POST", "/movies/"+id+"/analysis-lease", "", "")
	if status != 201 {
		b.Fatalf("open: %d %s", status, body)
	}
	var g httpapi.LeaseGrant
	_ = json.Unmarshal(body, &g)

	run := func(name string, c *counted, want int, f func() int) {
		b.Run(name, func(b *testing.B) {
			c.count.Reset()
			for b.Loop() {
				if got := f(); got != want {
					b.Fatalf("status %d, want %d", got, want)
				}
			}
			b.ReportMetric(float64(c.count.Total())/float64(b.N), "dynamodb-requests/op")
		})
	}
	run("GET_metadata", c, 200, func() int { s, _ := c.serve(b, "GET", "/movies/"+id, "", ""); return s })
	run("PUT_heartbeat", c, 200, func() int { s, _ := c.serve(b, "PUT", "/movies/"+id+"/analysis-lease", "", g.LeaseID); return s })
	run("PUT_trim", c, 200, func() int {
		s, _ := c.serve(b, "PUT", "/movies/"+id+"/trim", `{"start":0,"end":100}`, g.LeaseID)
		return s
	})
	run("POST_open_refused", c, 409, func() int { s, _ := c.serve(b, "POST", "/movies/"+id+"/analysis-lease", "", ""); return s })
	run("GET_frames", c, 200, func() int { s, _ := c.serve(b, "GET", "/movies/"+id+"/frames", "", ""); return s })

	l := newCounted(b, map[string]string{httpapi.EnvLambdaFunctionName: "api"})
	adapter := httpadapter.NewV2(l.h)
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "GET /{proxy+}", RawPath: "/movies/" + id,
		Headers: map[string]string{"accept": "application/json"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID: "bench", DomainName: "r2d2c3po.execute-api.us-east-1.amazonaws.com",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/movies/" + id},
			Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
				JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"sub": "u1", "name": "User One"}}},
		},
	}
	run("GET_metadata_lambda_adapter", l, 200, func() int {
		resp, err := adapter.ProxyWithContext(context.Background(), ev)
		if err != nil {
			b.Fatal(err)
		}
		return resp.StatusCode
	})
}

// memStore is the domain's reference semantics in memory, to measure the
// edge alone.
type memStore struct {
	mu sync.Mutex
	m  map[string]domain.Movie
}

func (s *memStore) Get(_ context.Context, id string) (domain.Movie, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.m[id]
	if !ok {
		return domain.Movie{}, &domain.Error{Code: domain.CodeNotFound}
	}
	return m, nil
}

func (s *memStore) List(context.Context) ([]domain.Movie, []*schema.MalformedMovieError, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Values(s.m)), nil, nil
}

func (s *memStore) Commit(_ context.Context, id string, c domain.Command) (domain.Movie, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var cur *domain.Movie
	if m, ok := s.m[id]; ok {
		cur = &m
	}
	next, err := domain.Execute(cur, c)
	if err != nil {
		return domain.Movie{}, err
	}
	s.m[id] = next
	return next, nil
}

func (s *memStore) Release(ctx context.Context, id string, c domain.Release) (bool, error) {
	_, err := s.Commit(ctx, id, c)
	if code := domain.ErrorCode(err); code == domain.CodeNotHeld || code == domain.CodeNotFound {
		return false, nil
	}
	return err == nil, err
}

// BenchmarkEdge is the handler's own cost per request (routing, identity,
// decoding, problem mapping, the access log line), with an in-memory store:
//
//	go test -run '^$' -bench Edge ./functions/internal/httpapi
func BenchmarkEdge(b *testing.B) {
	m, _ := domain.NewMovie("m1", "Movie", 300, 30, t0)
	m.Settings.Markers = []domain.Marker{{ID: "a", X: 0.5, Y: 0.5}}
	store := &memStore{m: map[string]domain.Movie{"m1": m}}
	clk := &clock{t: t0}
	h, err := httpapi.New(httpapi.Config{Movies: store, Frames: nopFrames{}, History: nopHistory{}, Auth: mustAuth(b, map[string]string{httpapi.EnvDevAuth: "1"}),
		Now: clk.Now, LeaseDuration: leaseDuration, Logger: logging.New(io.Discard, slog.LevelInfo)})
	if err != nil {
		b.Fatal(err)
	}
	serve := func(method, path, body, lease string) int {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set(httpapi.HeaderDevUser, "u1")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if lease != "" {
			req.Header.Set(httpapi.HeaderLeaseID, lease)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	_ = serve("POST", "/movies/m1/analysis-lease", "", "")
	lease := store.m["m1"].Lease.ID
	markers := `{"markers":[{"id":"a","label":"left eye","x":0.25,"y":0.75},{"id":"b","x":0.5,"y":0.5}]}`
	for _, c := range []struct {
		name, method, path, body, lease string
		want                            int
	}{
		{"GET_metadata", "GET", "/movies/m1", "", "", 200},
		{"PUT_markers", "PUT", "/movies/m1/markers", markers, lease, 200},
		{"PUT_trim_400", "PUT", "/movies/m1/trim", `{"start":0.5,"end":1}`, lease, 400},
		{"POST_open_409", "POST", "/movies/m1/analysis-lease", "", "", 409},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := serve(c.method, c.path, c.body, c.lease); got != c.want {
					b.Fatalf("status %d, want %d", got, c.want)
				}
			}
		})
	}
}

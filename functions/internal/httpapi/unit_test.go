package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/schema"
)

// Stores that need no database, for the tests of the edge itself.

type nopStore struct{ err error }

func (s nopStore) Get(context.Context, string) (domain.Movie, error) { return domain.Movie{}, s.err }
func (s nopStore) List(context.Context) ([]domain.Movie, []*schema.MalformedMovieError, error) {
	return nil, nil, s.err
}
func (s nopStore) Commit(context.Context, string, domain.Command) (domain.Movie, error) {
	return domain.Movie{}, s.err
}
func (s nopStore) Release(context.Context, string, domain.Release) (bool, error) { return false, s.err }

type nopFrames struct{}

func (nopFrames) Page(context.Context, string, int, int) ([]domain.Frame, *int, error) {
	return nil, nil, nil
}

type nopHistory struct{}

func (nopHistory) History(context.Context, string, *events.HistoryPosition, int) ([]schema.AuditItem, *events.HistoryPosition, error) {
	return nil, nil, nil
}

func discardLogger() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// The authenticator is decided once, from the runtime environment.
func TestChooseAuthenticator(t *testing.T) {
	for _, c := range []struct {
		name    string
		env     map[string]string
		want    string // "" when startup must fail
		wantErr string
	}{
		{"local, DEV_AUTH=1", map[string]string{"DEV_AUTH": "1"}, "dev-header", ""},
		{"local, unset", map[string]string{}, "jwt-claims", ""},
		{"local, DEV_AUTH=0", map[string]string{"DEV_AUTH": "0"}, "jwt-claims", ""},
		{"local, DEV_AUTH=yes", map[string]string{"DEV_AUTH": "yes"}, "", "DEV_AUTH"},
		{"lambda", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "api"}, "jwt-claims", ""},
		{"lambda, DEV_AUTH=1", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "api", "DEV_AUTH": "1"}, "", "inside Lambda"},
		{"lambda runtime API only, DEV_AUTH=1", map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001", "DEV_AUTH": "1"}, "", "inside Lambda"},
		{"lambda, DEV_AUTH=0", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "api", "DEV_AUTH": "0"}, "", "inside Lambda"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := httpapi.ChooseAuthenticator(env(c.env))
			if c.want == "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v, %v; want an error containing %q", a, err, c.wantErr)
				}
				return
			}
			if err != nil || a.Name() != c.want {
				t.Fatalf("got %v, %v; want %s", a, err, c.want)
			}
		})
	}
}

// Inside Lambda the development headers are ignored: the JWT-claims
// authenticator reads only the adapter's request context.
func TestLambdaIgnoresDevHeaders(t *testing.T) {
	a, err := httpapi.ChooseAuthenticator(env(map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "api"}))
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/movies", nil)
	r.Header.Set(httpapi.HeaderDevUser, "mallory")
	r.Header.Set(core.APIGwContextHeader, `{"authorizer":{"jwt":{"claims":{"sub":"mallory","name":"Mallory"}}}}`)
	if _, err := a.Authenticate(r); domain.ErrorCode(err) != httpapi.CodeUnauthenticated {
		t.Fatalf("got %v, want unauthenticated", err)
	}
}

func TestClaims(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	for _, c := range []struct {
		name   string
		claims map[string]string
		want   domain.User // zero: 401
	}{
		{"name", map[string]string{"sub": "u1", "name": "Ada Lovelace", "email": "ada@example.com"}, domain.User{ID: "u1", Name: "Ada Lovelace"}},
		{"email when no name", map[string]string{"sub": "u1", "email": "ada@example.com"}, domain.User{ID: "u1", Name: "ada@example.com"}},
		{"cognito access token", map[string]string{"sub": "u1", "username": "ada"}, domain.User{ID: "u1", Name: "ada"}},
		{"long name is cut on a rune", map[string]string{"sub": "u1", "name": long}, domain.User{ID: "u1", Name: strings.Repeat("é", 64)}},
		{"control characters dropped", map[string]string{"sub": "u1", "name": "Ada\n\tL\x00"}, domain.User{ID: "u1", Name: "Ada L"}},
		{"no sub", map[string]string{"name": "Ada"}, domain.User{}},
		{"no display name", map[string]string{"sub": "u1"}, domain.User{}},
		{"blank name", map[string]string{"sub": "u1", "name": " \t "}, domain.User{}},
		{"no claims", nil, domain.User{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got domain.User
			var err error
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, err = httpapi.ClaimsAuthenticator{}.Authenticate(r)
				w.WriteHeader(204)
			})
			ev := lambdaevents.APIGatewayV2HTTPRequest{RawPath: "/movies", RequestContext: lambdaevents.APIGatewayV2HTTPRequestContext{
				HTTP: lambdaevents.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/movies"}}}
			if c.claims != nil {
				ev.RequestContext.Authorizer = &lambdaevents.APIGatewayV2HTTPRequestContextAuthorizerDescription{
					JWT: &lambdaevents.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: c.claims}}
			}
			if _, perr := httpadapter.NewV2(h).ProxyWithContext(context.Background(), ev); perr != nil {
				t.Fatal(perr)
			}
			if c.want == (domain.User{}) {
				if domain.ErrorCode(err) != httpapi.CodeUnauthenticated {
					t.Fatalf("got %+v, %v; want 401", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

// An error that is not a refusal is a generic 500: nothing of it in the
// body, logged once at error level (with anything shaped like a lease ID
// redacted).
func TestInternalErrorsAreGeneric500s(t *testing.T) {
	secret := "0123456789abcdef0123456789abcdef"
	var logs bytes.Buffer
	h, err := httpapi.New(httpapi.Config{
		Movies: nopStore{err: errors.New("dynamodb: connection reset; lease " + secret)}, Frames: nopFrames{}, History: nopHistory{},
		Auth: mustAuth(t, map[string]string{"DEV_AUTH": "1"}), LeaseDuration: leaseDuration,
		Logger: logging.New(&logs, slog.LevelInfo),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/movies", "/movies/m1", "/movies/m1/frames"} {
		logs.Reset()
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set(httpapi.HeaderDevUser, "u1")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		r := &response{t: t, req: "GET " + path, status: w.Code, header: w.Header(), body: w.Body.Bytes()}
		checkSpec(t, req, r)
		p := r.problem(500, httpapi.CodeInternal)
		if strings.Contains(string(r.body), "connection reset") || strings.Contains(string(r.body), secret) {
			t.Fatalf("500 body leaks the error: %s", r.body)
		}
		if p.Detail == "" || p.RequestID == "" || p.Instance != path {
			t.Fatalf("problem %+v", p)
		}
		var line map[string]any
		if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
			t.Fatalf("log %q: %v", logs.String(), err)
		}
		if line["level"] != "ERROR" || !strings.Contains(line["error"].(string), "connection reset") || strings.Contains(logs.String(), secret) {
			t.Fatalf("log line %s", logs.String())
		}
	}
}

// A panic is a 500 too, and the process goes on.
func TestPanicsAreGeneric500s(t *testing.T) {
	var logs bytes.Buffer
	h, err := httpapi.New(httpapi.Config{
		Movies: panicStore{}, Frames: nopFrames{}, History: nopHistory{}, Auth: mustAuth(t, map[string]string{"DEV_AUTH": "1"}),
		LeaseDuration: leaseDuration, Logger: logging.New(&logs, slog.LevelInfo),
	})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/movies", nil)
	req.Header.Set(httpapi.HeaderDevUser, "u1")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 500 || !strings.Contains(logs.String(), `"level":"ERROR"`) || strings.Contains(w.Body.String(), "boom") {
		t.Fatalf("status %d body %s log %s", w.Code, w.Body, logs.String())
	}
}

type panicStore struct{ nopStore }

func (panicStore) List(context.Context) ([]domain.Movie, []*schema.MalformedMovieError, error) {
	panic("boom")
}

func mustAuth(tb testing.TB, m map[string]string) httpapi.Authenticator {
	tb.Helper()
	a, err := httpapi.ChooseAuthenticator(env(m))
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

func TestNewNeedsItsDependencies(t *testing.T) {
	full := httpapi.Config{Movies: nopStore{}, Frames: nopFrames{}, History: nopHistory{}, Auth: httpapi.ClaimsAuthenticator{}, LeaseDuration: leaseDuration, Logger: discardLogger()}
	for name, mutate := range map[string]func(*httpapi.Config){
		"movies":  func(c *httpapi.Config) { c.Movies = nil },
		"frames":  func(c *httpapi.Config) { c.Frames = nil },
		"history": func(c *httpapi.Config) { c.History = nil },
		"auth":    func(c *httpapi.Config) { c.Auth = nil },
		"logger":  func(c *httpapi.Config) { c.Logger = nil },
		"lease":   func(c *httpapi.Config) { c.LeaseDuration = 0 },
		// S3 takes 10,000 parts: a limit they cannot reach.
		"parts for the limit": func(c *httpapi.Config) {
			c.Multipart, c.PartBytes, c.MaxUploadBytes = (*s3store.Store)(nil), domain.MinPartBytes, domain.MinPartBytes*domain.MaxParts+1
		},
	} {
		c := full
		mutate(&c)
		if _, err := httpapi.New(c); err == nil {
			t.Errorf("no %s: no error", name)
		}
	}
	if _, err := httpapi.New(full); err != nil {
		t.Fatal(err)
	}
}

package httpapi_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/testkit/awscount"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// counted is a handler whose DynamoDB client counts its requests.
type counted struct {
	h     *httpapi.Handler
	count *awscount.Counter
	clock *clock
}

func newCounted(tb testing.TB, authEnv map[string]string) *counted {
	tb.Helper()
	fx := tables(tb)
	c := &counted{count: &awscount.Counter{}, clock: &clock{t: t0}}
	client := testenv.DynamoDB(tb, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, c.count.APIOption) })
	h, err := httpapi.New(httpapi.Config{
		Movies: dynamo.NewMovieStore(client, fx.tables.Movies), Frames: dynamo.NewFrameStore(client, fx.tables.Frames),
		History: dynamo.NewAuditReader(client, fx.tables.Audit),
		Auth:    mustAuth(tb, authEnv), Now: c.clock.Now,
		LeaseDuration: leaseDuration, Logger: logging.New(&bytes.Buffer{}, slog.LevelError),
	})
	if err != nil {
		tb.Fatal(err)
	}
	c.h = h
	return c
}

// serve runs one request as user u1 and returns the status and body.
func (c *counted) serve(tb testing.TB, method, path, body, leaseID string) (int, []byte) {
	tb.Helper()
	var rd *bytes.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	} else {
		rd = bytes.NewReader(nil)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set(httpapi.HeaderDevUser, "u1")
	req.Header.Set(httpapi.HeaderDevUserName, "User One")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if leaseID != "" {
		req.Header.Set(httpapi.HeaderLeaseID, leaseID)
	}
	w := httptest.NewRecorder()
	c.h.ServeHTTP(w, req)
	return w.Code, w.Body.Bytes()
}

// Each route costs the DynamoDB requests its design says: one conditional
// write per transition (an edit's 200 is built from the row UpdateItem
// returns, a refusal from the item it evaluated), one read per metadata
// read, a read and a Query per frames page.
func TestDynamoDBRequestsPerRoute(t *testing.T) {
	c := newCounted(t, map[string]string{httpapi.EnvDevAuth: "1"})
	id := createMovie(t, tables(t))
	var lease string
	for _, s := range []struct {
		name         string
		method, path string
		body         string
		withLease    bool
		status       int
		want         map[string]int
	}{
		{"open", "POST", "/analysis-lease", "", false, 201, map[string]int{"UpdateItem": 1}},
		{"open refused", "POST", "/analysis-lease", "", false, 409, map[string]int{"UpdateItem": 1}},
		{"heartbeat", "PUT", "/analysis-lease", "", true, 200, map[string]int{"UpdateItem": 1}},
		{"edit markers", "PUT", "/markers", `{"markers":[{"id":"a","x":0.5,"y":0.5}]}`, true, 200, map[string]int{"UpdateItem": 1}},
		{"edit trim", "PUT", "/trim", `{"start":0,"end":100}`, true, 200, map[string]int{"UpdateItem": 1}},
		{"edit trim refused by the row", "PUT", "/trim", `{"start":0,"end":1000}`, true, 422, map[string]int{"UpdateItem": 1}},
		{"edit interval", "PUT", "/capture-interval", `{"captureInterval":2}`, true, 200, map[string]int{"UpdateItem": 1}},
		{"edit refused by the decoder", "PUT", "/capture-interval", `{"captureInterval":2.5}`, true, 400, map[string]int{}},
		{"metadata", "GET", "", "", false, 200, map[string]int{"GetItem": 1}},
		{"frames", "GET", "/frames", "", false, 200, map[string]int{"GetItem": 1, "Query": 1}},
		// The movie's row, then one bounded Query of the audit history index
		// (dynamo's TestHistoryPageIsOneBoundedQuery counts the items read).
		{"history", "GET", "/history?limit=2", "", false, 200, map[string]int{"GetItem": 1, "Query": 1}},
		{"history, garbage cursor", "GET", "/history?cursor=bm90LWEtY3Vyc29y", "", false, 400, map[string]int{}},
		{"release", "DELETE", "/analysis-lease", "", true, 204, map[string]int{"UpdateItem": 1}},
		{"release, nothing held", "DELETE", "/analysis-lease", "", true, 204, map[string]int{"UpdateItem": 1}},
		{"trace without a lease", "POST", "/traces", `{"fromFrame":0}`, false, 202, map[string]int{"UpdateItem": 1}},
	} {
		c.count.Reset()
		l := ""
		if s.withLease {
			l = lease
		}
		status, body := c.serve(t, s.method, "/movies/"+id+s.path, s.body, l)
		if status != s.status {
			t.Fatalf("%s: status %d, want %d: %s", s.name, status, s.status, body)
		}
		if s.name == "open" {
			var g httpapi.LeaseGrant
			_ = json.Unmarshal(body, &g)
			lease = g.LeaseID
		}
		got := c.count.Snapshot()
		if len(got) != len(s.want) {
			t.Errorf("%s: requests %v, want %v", s.name, got, s.want)
			continue
		}
		for op, n := range s.want {
			if got[op] != n {
				t.Errorf("%s: requests %v, want %v", s.name, got, s.want)
			}
		}
	}
	// Refused before any request: no identity, a malformed movie ID.
	c.count.Reset()
	req := httptest.NewRequest("GET", "/movies/"+id, nil)
	w := httptest.NewRecorder()
	c.h.ServeHTTP(w, req)
	if w.Code != http.StatusUnauthorized || c.count.Total() != 0 {
		t.Fatalf("unauthenticated: %d with %d requests", w.Code, c.count.Total())
	}
	if status, _ := c.serve(t, "GET", "/movies/bad.id", "", ""); status != 404 || c.count.Total() != 0 {
		t.Fatalf("malformed ID: %d with %d requests", status, c.count.Total())
	}
}

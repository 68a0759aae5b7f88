package httpapi_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
)

// Every response any test in this package receives, through either
// transport, is validated against openapi.json (kin-openapi, which
// validates OpenAPI 3.1 documents with its JSON Schema 2020-12 validator).
// Undocumented statuses fail (IncludeResponseStatus). Responses of
// undocumented routes (404 for an unknown path, 405) are checked against the
// Problem schema.

var spec struct {
	once    sync.Once
	doc     *openapi3.T
	router  routers.Router
	problem *openapi3.Schema
	err     error

	mu   sync.Mutex
	seen map[string]map[int]bool // operationId -> statuses validated
}

func loadSpec() error {
	spec.once.Do(func() {
		// A CSV download starts with "# key: value" comment lines; the
		// rest must be CSV with one column count. The schema is a string.
		openapi3filter.RegisterBodyDecoder("text/csv", func(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
			b, err := io.ReadAll(r)
			if err != nil {
				return nil, err
			}
			cr := csv.NewReader(bytes.NewReader(b))
			cr.Comment = '#'
			if _, err := cr.ReadAll(); err != nil {
				return nil, err
			}
			return string(b), nil
		})
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(httpapi.OpenAPIDocument)
		if err != nil {
			spec.err = fmt.Errorf("load openapi.json: %w", err)
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			spec.err = fmt.Errorf("validate openapi.json: %w", err)
			return
		}
		router, err := legacy.NewRouter(doc)
		if err != nil {
			spec.err = fmt.Errorf("router: %w", err)
			return
		}
		spec.doc, spec.router = doc, router
		spec.problem = doc.Components.Schemas["Problem"].Value
		spec.seen = map[string]map[int]bool{}
	})
	return spec.err
}

// checkSpec validates one real response against the document.
func checkSpec(t testing.TB, req *http.Request, r *response) {
	t.Helper()
	if err := loadSpec(); err != nil {
		t.Fatal(err)
	}
	route, params, err := spec.router.FindRoute(req)
	if err != nil {
		if r.status != http.StatusNotFound && r.status != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d from a route openapi.json does not declare", r.req, r.status)
		}
		var v any
		if err := json.Unmarshal(r.body, &v); err != nil {
			t.Errorf("%s: body is not JSON: %s", r.req, r.body)
			return
		}
		if err := spec.problem.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("%s: not a Problem: %v", r.req, err)
		}
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 r.status,
		Header:                 r.header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(r.body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s: response %d does not match openapi.json: %v\nbody: %s", r.req, r.status, err, r.body)
		return
	}
	spec.mu.Lock()
	defer spec.mu.Unlock()
	op := route.Operation.OperationID
	if spec.seen[op] == nil {
		spec.seen[op] = map[int]bool{}
	}
	spec.seen[op][r.status] = true
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := checkCoverage(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// checkCoverage requires that the tests validated, for every operation, its
// success status and at least one problem. It is meaningful only for a full
// run, so it is skipped when -run or -skip selects tests.
func checkCoverage() error {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return nil
		}
	}
	if loadSpec() != nil {
		return nil // the tests already failed
	}
	spec.mu.Lock()
	defer spec.mu.Unlock()
	var report, missing []string
	for path, item := range spec.doc.Paths.Map() {
		for method, op := range item.Operations() {
			seen := spec.seen[op.OperationID]
			var ok, problem bool
			var statuses []int
			for s := range seen {
				statuses = append(statuses, s)
				ok = ok || s < 400
				problem = problem || s >= 400
			}
			sort.Ints(statuses)
			report = append(report, fmt.Sprintf("%-7s %-40s %v", method, path, statuses))
			if !ok || (!problem && op.OperationID != "openAPI") {
				missing = append(missing, fmt.Sprintf("%s %s (%s): validated statuses %v, want a success and a problem", method, path, op.OperationID, statuses))
			}
		}
	}
	slices.Sort(report)
	if testing.Verbose() {
		fmt.Printf("responses validated against openapi.json:\n%s\n", strings.Join(report, "\n"))
	}
	if len(missing) > 0 {
		return fmt.Errorf("openapi coverage:\n%s", strings.Join(missing, "\n"))
	}
	return nil
}

// The document loads as OpenAPI 3.1, and its operations are exactly the
// handler's routes.
func TestOpenAPIDocumentMatchesRoutes(t *testing.T) {
	if err := loadSpec(); err != nil {
		t.Fatal(err)
	}
	if !spec.doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %q, want 3.1", spec.doc.OpenAPI)
	}
	h, err := httpapi.New(httpapi.Config{Movies: nopStore{}, Frames: nopFrames{}, History: nopHistory{}, Auth: httpapi.ClaimsAuthenticator{},
		LeaseDuration: leaseDuration, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	fromHandler := h.Patterns()
	var fromDoc []string
	for path, item := range spec.doc.Paths.Map() {
		for method := range item.Operations() {
			fromDoc = append(fromDoc, method+" "+path)
		}
	}
	slices.Sort(fromHandler)
	slices.Sort(fromDoc)
	if !slices.Equal(fromHandler, fromDoc) {
		t.Fatalf("routes differ:\nhandler: %v\nopenapi: %v", fromHandler, fromDoc)
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/testkit/awscount"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/schema"
)

// TestAPIOperationsAreListed drives every route of the API, built by
// build() as the Lambda builds it, against the emulators with a request
// counter on its AWS clients, and requires testdata/aws-operations.txt to
// list exactly the operations it sent: a new call in the code must be
// listed, and so checked against the api role's grants by infra/stack's
// TestFunctionCallsAreAllowed (the emulators do not check IAM, so a
// missing grant would first show in AWS, as AccessDenied).
func TestAPIOperationsAreListed(t *testing.T) {
	ddb, s3c := testenv.DynamoDB(t), testenv.S3(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	tables := testenv.NewTables(t, ddb)
	bucket := strings.ToLower(testenv.UniqueName(t, "api-ops"))
	bucket = strings.Trim(bucket[:min(len(bucket), 63)], "-_")
	bucket = strings.ReplaceAll(bucket, "_", "-")
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	vars := map[string]string{
		envvar.MoviesTable: tables.Movies, envvar.FramesTable: tables.Frames, envvar.AuditTable: tables.Audit,
		envvar.MoviesBucket: bucket, httpapi.EnvDevAuth: "1",
		envvar.DynamoDBEndpoint: os.Getenv(envvar.DynamoDBEndpoint), envvar.S3Endpoint: os.Getenv(envvar.S3Endpoint),
	}
	counter := awscount.Named(vars)
	h, _, err := build(ctx, env(vars), func(c *aws.Config) { c.APIOptions = append(c.APIOptions, counter.APIOption) })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	call := func(method, path, body, lease string) string {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("X-Dev-User", "dev-ops")
		req.Header.Set("X-Dev-User-Name", "Ops")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if lease != "" {
			req.Header.Set(httpapi.HeaderLeaseID, lease)
		}
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode >= 500 {
			t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
		return string(b)
	}
	field := func(body, name string) string {
		_, rest, ok := strings.Cut(body, `"`+name+`":"`)
		if !ok {
			t.Fatalf("no %s in %s", name, body)
		}
		v, _, _ := strings.Cut(rest, `"`)
		return v
	}

	// A movie with a video, as the ingest leaves it, written with the
	// tests' own client (not counted).
	m, err := domain.NewMovie("ops-movie", "Ops movie", 300, 25, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := dynamo.NewMovieStore(ddb, tables.Movies).Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	// Its traced frames and objects (DELETE /movies/{id} marks it deleting;
	// the sweeper removes them).
	for i := range 3 {
		item, err := schema.MarshalFrame("ops-movie", domain.Frame{Index: i, JobID: token.New(), Points: []domain.Point{{MarkerID: "m1", X: 0.5, Y: 0.5}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &tables.Frames, Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{s3store.FrameKey("ops-movie", 0), s3store.TrackerPrefix + "ops-movie/checkpoint"} {
		if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(key), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
	}
	call("GET", "/movies", "", "")
	created := call("POST", "/movies", `{"title":"Upload","fileName":"a.mp4","contentType":"video/mp4","sizeBytes":1000}`, "")
	uploaded := field(created, "id")
	call("GET", "/movies/ops-movie", "", "")
	lease := field(call("POST", "/movies/ops-movie/analysis-lease", "", ""), "leaseId")
	call("PUT", "/movies/ops-movie/analysis-lease", "", lease)
	call("PUT", "/movies/ops-movie/markers", `{"markers":[{"id":"m1","label":"tip","x":0.5,"y":0.5}]}`, lease)
	call("PUT", "/movies/ops-movie/trim", `{"start":0,"end":200}`, lease)
	call("PUT", "/movies/ops-movie/capture-interval", `{"captureInterval":2}`, lease)
	call("POST", "/movies/ops-movie/traces", `{"fromFrame":0}`, lease)
	call("GET", "/movies/ops-movie/frames?from=0&limit=10", "", "")
	call("GET", "/movies/ops-movie/history", "", "")
	call("GET", "/movies/ops-movie/frames/0/image", "", "")
	call("POST", "/movies/ops-movie/traces/cancel", "", "")
	call("DELETE", "/movies/ops-movie/analysis-lease", "", lease)
	call("POST", "/movies/ops-movie/analysis-lease/release", fmt.Sprintf(`{"leaseId":%q}`, lease), "")
	call("DELETE", "/movies/"+uploaded, "", "")
	call("DELETE", "/movies/ops-movie", "", "")

	unlisted, unseen, err := counter.CompareWithList("testdata/aws-operations.txt")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("calls sent: %v", counter.Calls())
	if len(unlisted) > 0 {
		t.Errorf("the API sent %v, not in testdata/aws-operations.txt: list them (and grant them in infra/stack)", unlisted)
	}
	if len(unseen) > 0 {
		t.Errorf("testdata/aws-operations.txt lists %v, which no route sent: remove them, or drive the route that does", unseen)
	}
}

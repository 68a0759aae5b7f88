package stack

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// The S3 front applies a GET's response-* overrides as S3 does (fauxqs
// ignores them) and passes everything else through: other methods, other
// statuses, the body, the upstream's own headers.
func TestS3FrontAppliesResponseOverrides(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"e1"`)
		w.Header().Set("Content-Type", "image/png")
		if strings.HasSuffix(r.URL.Path, "/missing") {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		_, _ = io.WriteString(w, r.Method+" "+r.URL.Path)
	}))
	defer upstream.Close()
	f, err := startS3Front(upstream.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.stop(t.Context()); err != nil {
			t.Error(err)
		}
	}()
	do := func(method, path string, q url.Values) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, f.URL+path+"?"+q.Encode(), nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, string(body)
	}
	q := url.Values{"response-cache-control": {"private, max-age=31536000, immutable"}, "X-Amz-Signature": {"abc"}}
	res, body := do("GET", "/bucket/frames/m/0.png", q)
	if res.StatusCode != 200 || body != "GET /bucket/frames/m/0.png" || res.Header.Get("Cache-Control") != "private, max-age=31536000, immutable" ||
		res.Header.Get("ETag") != `"e1"` || res.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("GET: %d %q %v", res.StatusCode, body, res.Header)
	}
	if res, _ := do("PUT", "/bucket/frames/m/0.png", q); res.StatusCode != 200 || res.Header.Get("Cache-Control") != "" {
		t.Fatalf("PUT: %d %v", res.StatusCode, res.Header)
	}
	if res, _ := do("GET", "/bucket/missing", q); res.StatusCode != 404 || res.Header.Get("Cache-Control") != "" {
		t.Fatalf("a 404 got the override: %d %v", res.StatusCode, res.Header)
	}
	if res, _ := do("GET", "/bucket/frames/m/1.png", url.Values{"response-content-type": {"text/plain"}}); res.Header.Get("Content-Type") != "text/plain" ||
		res.Header.Get("Cache-Control") != "" {
		t.Fatalf("content type override: %v", res.Header)
	}
	if _, err := startS3Front("::not a url"); err == nil {
		t.Fatal("a bad endpoint was accepted")
	}
}

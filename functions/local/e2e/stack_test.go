package e2e

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/local/emulators"
	"github.com/movietrace/tracinglocks/functions/local/oidcprovider"
	"github.com/movietrace/tracinglocks/functions/local/stack"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// e2eUsers are the local OIDC provider's users in these tests: its test
// users Alice and Bob, Carol (the phone test), Dana (the sample clips) and
// an observer whose token getMovie reads the API with.
var e2eUsers = append(append([]oidcprovider.User(nil), oidcprovider.TestUsers...),
	oidcprovider.User{Login: "carol", Name: "Carol", Email: "carol@example.test"},
	oidcprovider.User{Login: "dana", Name: "Dana", Email: "dana@example.test"},
	oidcprovider.User{Login: observer, Name: "Observer", Email: "observer@example.test"},
)

const observer = "observer"

// signIn opens the page at url and signs in as name through the local OIDC
// provider (signInAs with the login of that name: "Alice" is "alice").
func signIn(b *tab, url, name string) {
	b.t.Helper()
	if pageDir() != "" {
		signInDev(b, url, name)
		return
	}
	signInAs(b, url, strings.ToLower(name), name)
}

// EnvPageDir, when set, names a directory holding another version of the
// page's files (index.html, app.js, style.css, ...): the tests then serve
// those instead of package web's, from a proxy in front of the stack, and
// the stack also accepts the development identity, which a page from before
// sign-in uses. This is how the defect tests were run against the page as
// it was before its fixes (docs/page-tests.md); it is never set otherwise.
const EnvPageDir = "E2E_PAGE_DIR"

func pageDir() string { return os.Getenv(EnvPageDir) }

// signInDev picks the development identity on a page from before sign-in.
func signInDev(b *tab, url, name string) {
	b.t.Helper()
	b.do("open the page and pick "+name,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.ID("identity-name")),
		chromedp.SetValue(chromedp.ID("identity-name"), name),
		chromedp.Click(chromedp.ID("identity-use")),
	)
	b.waitJS("signed in as "+name, `document.querySelector('#identity-current').textContent === 'signed in as `+name+`'`)
}

var pageFile = regexp.MustCompile(`^/(?:(?:actions/|views/)?[a-z]+\.js|style\.css)$`)

// servePageFrom starts a proxy in front of the stack at api that serves the
// page's files from dir (when dir has them) and everything else from the
// stack, and returns its URL (with a trailing slash, as Stack.URL).
func servePageFrom(t *testing.T, dir, api string) string {
	t.Helper()
	target, err := url.Parse(api)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Path
		if name == "/" {
			name = "/index.html"
		}
		if r.Method == http.MethodGet && (r.URL.Path == "/" || pageFile.MatchString(r.URL.Path)) {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				w.Header().Set("Cache-Control", "no-cache")
				http.ServeFile(w, r, filepath.Join(dir, name))
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// startStack starts make run's stack in-process on the test's emulators,
// with one movie, a short lease and a slow enough tracer to watch. As make
// run's, it signs in through the local OIDC provider (e2eUsers) and accepts
// no development identity.
func startStack(t *testing.T, out string) *stack.Stack {
	t.Helper()
	return startStackWith(t, out, nil)
}

// startStackWith is startStack with the options changed by mutate (nil:
// none), e.g. to seed the real sample clips instead of the test's rows.
func startStackWith(t *testing.T, out string, mutate func(*stack.Options)) *stack.Stack {
	t.Helper()
	ddb, sqs := os.Getenv("DYNAMODB_ENDPOINT"), os.Getenv("SQS_ENDPOINT")
	if ddb == "" || sqs == "" {
		t.Fatal("DYNAMODB_ENDPOINT and SQS_ENDPOINT are not set: run the tests with `make test`")
	}
	movie, err := domain.NewMovie(movieID, "End-to-end movie", frameCount, 30, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	damaged, err := domain.NewMovie(failingID, "Damaged end-to-end movie", 100, 25, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	damaged.Settings.Markers = []domain.Marker{{ID: "m1", Label: "Target", X: 0.3, Y: 0.6}}
	logFile, err := os.Create(filepath.Join(out, "stack.log"))
	if err != nil {
		t.Fatal(err)
	}
	opts := stack.Options{
		DynamoDBEndpoint: ddb, SQSEndpoint: sqs, S3Endpoint: os.Getenv("S3_ENDPOINT"), Prefix: testenv.UniqueName(t, "e2e"),
		LeaseDuration: 30 * time.Second, FrameDelay: 30 * time.Millisecond, ProgressEvery: 500 * time.Millisecond,
		Movies: []domain.Movie{movie, damaged}, FailAt: map[string]int{failingID: failFrame},
		Log:    slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelInfo})),
		SignIn: true, SignInUsers: e2eUsers,
	}
	if mutate != nil {
		mutate(&opts)
	}
	if pageDir() != "" {
		opts.DevAuth = true
	}
	st, err := stack.Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if dir := pageDir(); dir != "" {
		t.Logf("%s=%s: serving the page from there, the API from %s", EnvPageDir, dir, st.URL)
		st.URL = servePageFrom(t, dir, st.URL)
	}
	t.Cleanup(func() {
		if err := st.Stop(); err != nil {
			t.Error(err)
		}
		logFile.Close()
	})
	return st
}

// getMovie reads the movie through the API, as a third user (the
// observer's token).
func getMovie(t *testing.T, st *stack.Stack, id string) httpapi.MovieDetail {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, st.URL+"movies/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+idToken(t, st, observer))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m httpapi.MovieDetail
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /movies/%s: %s", id, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// tokens caches an ID token per stack and login for the tests' own API
// calls, renewed by signing in again once it is tokenReuse old.
var tokens = struct {
	sync.Mutex
	m map[string]issued
}{m: map[string]issued{}}

type issued struct {
	token string
	at    time.Time
}

const tokenReuse = 30 * time.Second

// idToken is an ID token of login from st's local OIDC provider, signed in
// as the page does (authorization code with PKCE).
func idToken(t *testing.T, st *stack.Stack, login string) string {
	t.Helper()
	if st.OIDC == nil {
		t.Fatal("the stack has no OIDC provider (stack.Options.SignIn)")
	}
	key := st.URL + " " + login
	tokens.Lock()
	defer tokens.Unlock()
	if c, ok := tokens.m[key]; ok && time.Since(c.at) < tokenReuse {
		return c.token
	}
	at := time.Now()
	tok, err := oidcprovider.SignIn(t.Context(), http.DefaultClient, st.OIDC.Issuer(), st.OIDC.ClientID(), st.URL, login)
	if err != nil {
		t.Fatalf("sign in %s for the test's API calls: %v", login, err)
	}
	tokens.m[key] = issued{token: tok.IDToken, at: at}
	return tok.IDToken
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(stepTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting until %s: timed out after %s", what, stepTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// outputDir is testoutput/e2e/<test> at the repository root (gitignored), emptied.
func outputDir(t *testing.T) string {
	t.Helper()
	tools, err := emulators.ToolsDir() // <root>/.tools
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(tools), "testoutput", "e2e", t.Name())
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// releaseLease takes a lease away behind a page's back, with the beacon
// route (the lease ID is the whole capability).
func releaseLease(t *testing.T, st *stack.Stack, movie, leaseID string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"leaseId": leaseID})
	res, err := http.Post(st.URL+"movies/"+movie+"/analysis-lease/release", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("release: %s", res.Status)
	}
}

// Package oidcprovider is the local OpenID Connect provider of `make run`
// and the tests: github.com/oauth2-proxy/mockoidc (authorization code flow,
// refresh tokens, RS256-signed tokens, JWKS, discovery) behind a thin layer
// that makes it behave like the Cognito app client the stack deploys:
//
//   - a sign-in page that lists the test users (Alice and Bob by default),
//     one button each, instead of mockoidc's "next user in the queue";
//   - a public client: PKCE with S256 is required at the authorization
//     endpoint, and no client secret is needed at the token endpoint (the
//     layer supplies mockoidc's own, which never leaves the process);
//   - redirect and logout URIs only on loopback hosts (no open redirect);
//   - expires_in in seconds (mockoidc writes a Go duration in nanoseconds);
//   - Cognito's logout endpoint shape: /oidc/logout?client_id=&logout_uri=;
//   - one request at a time (mockoidc's session store is a plain map).
//
// The ID token carries sub, name (the display name the API trusts), email
// and preferred_username. It is served under /oidc/ of whatever server
// mounts Handler; the issuer is <base URL>/oidc.
package oidcprovider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
)

// User is a test user.
type User struct {
	// Login is the button's value and the sub claim.
	Login string
	// Name is the name claim: the display name the API trusts.
	Name  string
	Email string
}

// TestUsers are the users of the sign-in page by default.
var TestUsers = []User{
	{Login: "alice", Name: "Alice", Email: "alice@example.test"},
	{Login: "bob", Name: "Bob", Email: "bob@example.test"},
}

// DefaultClientID is the public client's ID (the JWT audience).
const DefaultClientID = "tracinglocks-local"

// Base is the path every endpoint is under.
const Base = mockoidc.IssuerBase

// LogoutPath is the Cognito-style logout endpoint.
const LogoutPath = Base + "/logout"

// Options configure New.
type Options struct {
	// BaseURL is the scheme://host:port the handler is served at, e.g. the
	// local stack's URL; the issuer is BaseURL + "/oidc". Required.
	BaseURL string
	// ClientID of the public client (default DefaultClientID).
	ClientID string
	// Users of the sign-in page (default TestUsers).
	Users []User
	// TokenTTL is the ID and access tokens' lifetime (default 10 min).
	TokenTTL time.Duration
	// LoginBaseURL, when set, is another origin (scheme://host:port) whose
	// server also mounts Handler and where the discovery document puts the
	// authorization, token and userinfo endpoints, with the logout endpoint
	// at /logout: Cognito's shape, whose issuer (and discovery, and JWKS)
	// is on cognito-idp.<region>.amazonaws.com and its sign-in pages and
	// token endpoint on the managed login domain.
	LoginBaseURL string
}

// Provider is a running provider's handler and settings.
type Provider struct {
	m        *mockoidc.MockOIDC
	users    map[string]User
	order    []User
	clientID string
	login    string // Options.LoginBaseURL, "" for the issuer's origin
	ttl      time.Duration
	mu       sync.Mutex // mockoidc's session store is not safe for concurrent use
	grants   map[string]int
}

// New creates a provider to be served at opts.BaseURL.
func New(opts Options) (*Provider, error) {
	u, err := url.Parse(strings.TrimSuffix(opts.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("oidcprovider: BaseURL %q must be scheme://host:port", opts.BaseURL)
	}
	if opts.ClientID == "" {
		opts.ClientID = DefaultClientID
	}
	if opts.Users == nil {
		opts.Users = TestUsers
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = 10 * time.Minute
	}
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		return nil, fmt.Errorf("oidcprovider: %w", err)
	}
	m.ClientID = opts.ClientID
	m.AccessTTL = opts.TokenTTL
	m.CodeChallengeMethodsSupported = []string{"S256"}
	// mockoidc derives its issuer and endpoint URLs from Server.Addr; the
	// server itself is whichever one mounts Handler, never this value.
	m.Server = &http.Server{Addr: u.Host}
	if u.Scheme == "https" {
		return nil, errors.New("oidcprovider: https is not supported; serve it on loopback http")
	}
	p := &Provider{m: m, users: map[string]User{}, clientID: opts.ClientID, ttl: opts.TokenTTL, grants: map[string]int{}}
	if opts.LoginBaseURL != "" {
		l, err := url.Parse(strings.TrimSuffix(opts.LoginBaseURL, "/"))
		if err != nil || l.Scheme != "http" || l.Host == "" || (l.Path != "" && l.Path != "/") || l.Host == u.Host {
			return nil, fmt.Errorf("oidcprovider: LoginBaseURL %q must be http://host:port of another origin than BaseURL", opts.LoginBaseURL)
		}
		p.login = "http://" + l.Host
	}
	for _, usr := range opts.Users {
		if usr.Login == "" || usr.Name == "" {
			return nil, fmt.Errorf("oidcprovider: user %+v needs a Login and a Name", usr)
		}
		p.users[usr.Login] = usr
		p.order = append(p.order, usr)
	}
	return p, nil
}

// Issuer is the iss claim and discovery base: <BaseURL>/oidc.
func (p *Provider) Issuer() string { return p.m.Issuer() }

// ClientID is the public client's ID, the aud claim of ID tokens.
func (p *Provider) ClientID() string { return p.clientID }

// Users are the sign-in page's users, in order.
func (p *Provider) Users() []User { return append([]User(nil), p.order...) }

// LogoutURL is the logout endpoint with the client ID filled in; the page
// adds logout_uri.
func (p *Provider) LogoutURL() string {
	if p.login != "" {
		return p.login + CognitoLogoutPath + "?client_id=" + url.QueryEscape(p.clientID)
	}
	return p.m.Addr() + LogoutPath + "?client_id=" + url.QueryEscape(p.clientID)
}

// LoginBaseURL is where the sign-in pages and the token endpoint are: the
// issuer's origin, or Options.LoginBaseURL.
func (p *Provider) LoginBaseURL() string {
	if p.login != "" {
		return p.login
	}
	return p.m.Addr()
}

// CognitoLogoutPath is Cognito's logout endpoint on its login domain.
const CognitoLogoutPath = "/logout"

// discovery is mockoidc's discovery document with the authorization, token
// and userinfo endpoints on the login origin.
func (p *Provider) discovery(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	p.m.Discovery(rec, r)
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		http.Error(w, "discovery: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if p.login != "" {
		for _, k := range []string{"authorization_endpoint", "token_endpoint", "userinfo_endpoint"} {
			if v, ok := doc[k].(string); ok {
				doc[k] = p.login + strings.TrimPrefix(v, p.m.Addr())
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(doc)
}

// cors lets a page on another origin read h's answers, as Cognito's
// discovery, JWKS, token and userinfo endpoints do (a preflight for the
// userinfo's Authorization header included).
func cors(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST")
			w.Header().Set("Access-Control-Allow-Headers", "authorization, content-type")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h(w, r)
	}
}

// Grants counts the tokens issued by grant type (authorization_code,
// refresh_token).
func (p *Provider) Grants() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.grants {
		out[k] = v
	}
	return out
}

// FastForward moves the provider's clock (tokens it issues from now on).
func (p *Provider) FastForward(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m.FastForward(d)
}

// Handler serves every endpoint under /oidc/.
func (p *Provider) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(mockoidc.AuthorizationEndpoint, p.authorize)
	mux.HandleFunc(mockoidc.TokenEndpoint, cors(p.token))
	mux.HandleFunc(mockoidc.UserinfoEndpoint, cors(p.serialized(p.m.Userinfo)))
	mux.HandleFunc(mockoidc.JWKSEndpoint, cors(p.serialized(p.m.JWKS)))
	mux.HandleFunc(mockoidc.DiscoveryEndpoint, cors(p.serialized(p.discovery)))
	mux.HandleFunc(LogoutPath, p.logout)
	mux.HandleFunc(CognitoLogoutPath, p.logout)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		mux.ServeHTTP(w, r)
	})
}

func (p *Provider) serialized(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		h(w, r)
	}
}

// oauthError writes an OAuth error response.
func oauthError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": description})
}

// loopbackURI accepts an absolute http(s) URI on a loopback host.
func loopbackURI(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// authorize checks the request as Cognito would for a public PKCE client,
// shows the sign-in page, and on a choice lets mockoidc issue the code for
// that user.
func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		oauthError(w, http.StatusMethodNotAllowed, "invalid_request", "GET or POST")
		return
	}
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "malformed parameters")
		return
	}
	f := r.Form
	switch {
	case f.Get("client_id") != p.clientID:
		oauthError(w, http.StatusBadRequest, "invalid_client", "unknown client_id")
		return
	case !loopbackURI(f.Get("redirect_uri")):
		// Never redirect an error to an unchecked URI.
		oauthError(w, http.StatusBadRequest, "invalid_request", "redirect_uri must be an http(s) URL on a loopback host")
		return
	case f.Get("response_type") != "code":
		oauthError(w, http.StatusBadRequest, "unsupported_response_type", "only the authorization code flow is allowed")
		return
	case f.Get("code_challenge") == "" || f.Get("code_challenge_method") != "S256":
		oauthError(w, http.StatusBadRequest, "invalid_request", "PKCE with code_challenge_method=S256 is required")
		return
	case f.Get("state") == "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "state is required")
		return
	}
	login := f.Get("login")
	if login == "" {
		p.signInPage(w, f)
		return
	}
	usr, ok := p.users[login]
	if !ok {
		oauthError(w, http.StatusBadRequest, "access_denied", "unknown user")
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// Under p.mu the user just queued is the one Authorize pops.
	p.m.QueueUser(&claimsUser{usr})
	p.m.Authorize(w, r)
}

var page = template.Must(template.New("signin").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in (local OIDC provider)</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main>
<h1>Sign in</h1>
<p>Local OpenID Connect provider of the development stack. Choose a test user:</p>
<form method="get" action="{{.Action}}">
{{range $k, $vs := .Params}}{{range $vs}}<input type="hidden" name="{{$k}}" value="{{.}}">
{{end}}{{end}}{{range .Users}}<p><button type="submit" name="login" value="{{.Login}}" data-testid="login-{{.Login}}">{{.Name}}</button> <small>{{.Email}}</small></p>
{{end}}</form>
</main></body></html>
`))

func (p *Provider) signInPage(w http.ResponseWriter, f url.Values) {
	params := url.Values{}
	for k, v := range f {
		if k != "login" {
			params[k] = v
		}
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, map[string]any{"Action": mockoidc.AuthorizationEndpoint, "Params": params, "Users": p.order}); err != nil {
		http.Error(w, "sign-in page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// The form's answer redirects to the client's redirect_uri, which
	// Chromium checks against form-action too: the page's origin is
	// another one when the sign-in pages have their own (LoginBaseURL).
	formAction := "'self'"
	if u, err := url.Parse(f.Get("redirect_uri")); err == nil && loopbackURI(f.Get("redirect_uri")) {
		formAction += " " + u.Scheme + "://" + u.Host
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; form-action "+formAction+"; frame-ancestors 'none'")
	_, _ = w.Write(buf.Bytes())
}

// token lets mockoidc answer, as for a public client: the client secret
// mockoidc insists on is supplied here (PKCE was required at the
// authorization endpoint, and mockoidc checks the verifier), and
// expires_in is rewritten from nanoseconds to seconds.
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		oauthError(w, http.StatusMethodNotAllowed, "invalid_request", "POST")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "malformed form")
		return
	}
	if r.Form.Get("client_secret") != "" {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "this is a public client: no client secret")
		return
	}
	if r.Form.Get("client_id") != p.clientID {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client_id")
		return
	}
	if r.Form.Get("grant_type") == "authorization_code" && r.Form.Get("code_verifier") == "" {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier is required")
		return
	}
	r.Form.Set("client_secret", p.m.ClientSecret)
	rec := httptest.NewRecorder()
	func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.m.Token(rec, r)
		if rec.Code == http.StatusOK {
			p.grants[r.Form.Get("grant_type")]++
		}
	}()
	body := rec.Body.Bytes()
	if rec.Code == http.StatusOK {
		var resp map[string]any
		if err := json.Unmarshal(body, &resp); err == nil {
			resp["expires_in"] = int(p.ttl / time.Second)
			if b, err := json.Marshal(resp); err == nil {
				body = b
			}
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

// logout answers Cognito's /logout: it redirects to logout_uri. The
// provider keeps no sign-in session (every sign-in shows the page), so
// there is nothing else to end.
func (p *Provider) logout(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != p.clientID {
		oauthError(w, http.StatusBadRequest, "invalid_client", "unknown client_id")
		return
	}
	to := q.Get("logout_uri")
	if !loopbackURI(to) {
		oauthError(w, http.StatusBadRequest, "invalid_request", "logout_uri must be an http(s) URL on a loopback host")
		return
	}
	http.Redirect(w, r, to, http.StatusFound)
}

// claimsUser is a mockoidc.User whose ID token has the name claim.
type claimsUser struct{ u User }

func (c *claimsUser) ID() string { return c.u.Login }

type userinfo struct {
	Sub               string `json:"sub"`
	Name              string `json:"name,omitempty"`
	Email             string `json:"email,omitempty"`
	PreferredUsername string `json:"preferred_username,omitempty"`
}

func (c *claimsUser) info(scopes []string) userinfo {
	out := userinfo{Sub: c.u.Login}
	for _, s := range scopes {
		switch s {
		case "profile":
			out.Name, out.PreferredUsername = c.u.Name, c.u.Login
		case "email":
			out.Email = c.u.Email
		}
	}
	return out
}

func (c *claimsUser) Userinfo(scopes []string) ([]byte, error) { return json.Marshal(c.info(scopes)) }

type idClaims struct {
	*mockoidc.IDTokenClaims
	Name              string `json:"name,omitempty"`
	Email             string `json:"email,omitempty"`
	PreferredUsername string `json:"preferred_username,omitempty"`
}

func (c *claimsUser) Claims(scopes []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	i := c.info(scopes)
	return &idClaims{IDTokenClaims: base, Name: i.Name, Email: i.Email, PreferredUsername: i.PreferredUsername}, nil
}

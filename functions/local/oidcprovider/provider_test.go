package oidcprovider_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/functions/local/oidcprovider"
)

const redirect = "http://127.0.0.1:9/"

func start(t *testing.T) (*oidcprovider.Provider, *httptest.Server) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	p, err := oidcprovider.New(oidcprovider.Options{BaseURL: "http://" + srv.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = p.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return p, srv
}

func claims(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSignInIssuesTheNameClaimForEachTestUser(t *testing.T) {
	p, srv := start(t)
	for _, u := range oidcprovider.TestUsers {
		tok, err := oidcprovider.SignIn(t.Context(), srv.Client(), p.Issuer(), p.ClientID(), redirect, u.Login)
		if err != nil {
			t.Fatal(err)
		}
		c := claims(t, tok.IDToken)
		if c["sub"] != u.Login || c["name"] != u.Name || c["email"] != u.Email || c["iss"] != p.Issuer() {
			t.Errorf("%s: ID token claims %v", u.Login, c)
		}
		if aud, _ := c["aud"].([]any); len(aud) != 1 || aud[0] != p.ClientID() {
			t.Errorf("%s: aud %v, want [%s]", u.Login, c["aud"], p.ClientID())
		}
		if tok.ExpiresIn != 600 || tok.RefreshToken == "" {
			t.Errorf("%s: expires_in %d (want 600 s), refresh token %q", u.Login, tok.ExpiresIn, tok.RefreshToken)
		}
		again, err := oidcprovider.Refresh(t.Context(), srv.Client(), p.Issuer(), p.ClientID(), tok.RefreshToken)
		if err != nil {
			t.Fatal(err)
		}
		if c := claims(t, again.IDToken); c["sub"] != u.Login || c["name"] != u.Name {
			t.Errorf("%s: refreshed ID token claims %v", u.Login, c)
		}
	}
}

func TestDiscoveryAdvertisesS256Only(t *testing.T) {
	p, srv := start(t)
	res, err := srv.Client().Get(p.Issuer() + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var d struct {
		Issuer  string   `json:"issuer"`
		JWKS    string   `json:"jwks_uri"`
		Methods []string `json:"code_challenge_methods_supported"`
	}
	if err := json.NewDecoder(res.Body).Decode(&d); err != nil {
		t.Fatal(err)
	}
	if d.Issuer != p.Issuer() || d.JWKS == "" || len(d.Methods) != 1 || d.Methods[0] != "S256" {
		t.Errorf("discovery %+v", d)
	}
}

func authorizeQuery(p *oidcprovider.Provider) url.Values {
	return url.Values{
		"client_id": {p.ClientID()}, "redirect_uri": {redirect}, "response_type": {"code"},
		"scope": {"openid profile email"}, "state": {"s1"},
		"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"},
	}
}

func get(t *testing.T, srv *httptest.Server, u string) (*http.Response, string) {
	t.Helper()
	c := *srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestSignInPageListsTheUsersAndKeepsTheRequest(t *testing.T) {
	p, srv := start(t)
	res, body := get(t, srv, p.Issuer()+"/authorize?"+authorizeQuery(p).Encode())
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("sign-in page: %s %s", res.Status, res.Header.Get("Content-Type"))
	}
	for _, want := range []string{`data-testid="login-alice"`, `data-testid="login-bob"`, ">Alice<", ">Bob<",
		`name="code_challenge" value="E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"`, `name="state" value="s1"`} {
		if !strings.Contains(body, want) {
			t.Errorf("sign-in page lacks %s", want)
		}
	}
}

func TestAuthorizeRefusesWhatCognitosClientRefuses(t *testing.T) {
	p, srv := start(t)
	cases := map[string]func(url.Values){
		"no PKCE":             func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") },
		"plain PKCE":          func(q url.Values) { q.Set("code_challenge_method", "plain") },
		"implicit flow":       func(q url.Values) { q.Set("response_type", "token") },
		"unknown client":      func(q url.Values) { q.Set("client_id", "someone-else") },
		"remote redirect":     func(q url.Values) { q.Set("redirect_uri", "https://evil.example/") },
		"relative redirect":   func(q url.Values) { q.Set("redirect_uri", "/cb") },
		"userinfo redirect":   func(q url.Values) { q.Set("redirect_uri", "http://a@127.0.0.1/") },
		"no state":            func(q url.Values) { q.Del("state") },
		"unknown user":        func(q url.Values) { q.Set("login", "mallory") },
		"garbage redirect":    func(q url.Values) { q.Set("redirect_uri", "\x00\xff::") },
		"javascript redirect": func(q url.Values) { q.Set("redirect_uri", "javascript:alert(1)") },
	}
	for name, mutate := range cases {
		q := authorizeQuery(p)
		mutate(q)
		res, body := get(t, srv, p.Issuer()+"/authorize?"+q.Encode())
		if res.StatusCode < 400 || res.StatusCode > 499 || res.Header.Get("Location") != "" {
			t.Errorf("%s: %s (Location %q) %s, want a 4xx and no redirect", name, res.Status, res.Header.Get("Location"), body)
		}
	}
}

func TestTokenEndpointIsForAPublicPKCEClient(t *testing.T) {
	p, srv := start(t)
	code := func() string {
		q := authorizeQuery(p)
		q.Set("login", "alice")
		res, _ := get(t, srv, p.Issuer()+"/authorize?"+q.Encode())
		loc, err := url.Parse(res.Header.Get("Location"))
		if err != nil || loc.Query().Get("code") == "" {
			t.Fatalf("authorize: %s %q", res.Status, res.Header.Get("Location"))
		}
		return loc.Query().Get("code")
	}
	post := func(form url.Values) (int, string) {
		res, err := srv.Client().PostForm(p.Issuer()+"/token", form)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	base := func() url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "client_id": {p.ClientID()}, "code": {code()}, "redirect_uri": {redirect}}
	}
	cases := map[string]func(url.Values){
		"no verifier":    func(url.Values) {},
		"wrong verifier": func(f url.Values) { f.Set("code_verifier", strings.Repeat("x", 43)) },
		"client secret": func(f url.Values) {
			f.Set("code_verifier", "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
			f.Set("client_secret", "s")
		},
		"other client": func(f url.Values) {
			f.Set("code_verifier", "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
			f.Set("client_id", "x")
		},
		"garbage grant": func(f url.Values) { f.Set("grant_type", "\x01password") },
		"garbage code": func(f url.Values) {
			f.Set("code", "%%%")
			f.Set("code_verifier", "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
		},
	}
	for name, mutate := range cases {
		f := base()
		mutate(f)
		if status, body := post(f); status < 400 || status > 499 {
			t.Errorf("%s: %d %s, want a 4xx", name, status, body)
		}
	}
	// RFC 7636's example verifier for the challenge authorizeQuery sends.
	f := base()
	f.Set("code_verifier", "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
	if status, body := post(f); status != http.StatusOK {
		t.Errorf("right verifier: %d %s", status, body)
	}
}

func TestLogoutRedirectsOnlyToLoopback(t *testing.T) {
	p, srv := start(t)
	res, _ := get(t, srv, p.LogoutURL()+"&logout_uri="+url.QueryEscape("http://127.0.0.1:8080/"))
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "http://127.0.0.1:8080/" {
		t.Errorf("logout: %s %q", res.Status, res.Header.Get("Location"))
	}
	for _, bad := range []string{"https://evil.example/", "", "//evil.example"} {
		res, _ := get(t, srv, p.LogoutURL()+"&logout_uri="+url.QueryEscape(bad))
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("logout to %q: %s, want 400", bad, res.Status)
		}
	}
}

func TestNewRefusesABadBaseURL(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:80", "http://h/path", "ftp://h", "https://h"} {
		if _, err := oidcprovider.New(oidcprovider.Options{BaseURL: u}); err == nil {
			t.Errorf("BaseURL %q accepted", u)
		}
	}
}

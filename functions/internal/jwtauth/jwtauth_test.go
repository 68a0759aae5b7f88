package jwtauth_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/golang-jwt/jwt/v5"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/jwtauth"
	"github.com/movietrace/tracinglocks/functions/local/oidcprovider"
)

const redirect = "http://127.0.0.1:9/"

// provider is a real local OIDC provider (mockoidc) on a loopback port.
func provider(t *testing.T) (*oidcprovider.Provider, *httptest.Server) {
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

func request(authorization string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/movies", nil)
	if authorization != "" {
		r.Header.Set("Authorization", authorization)
	}
	return r
}

func wantUnauthenticated(t *testing.T, what string, u domain.User, err error) {
	t.Helper()
	e, ok := domain.AsError(err)
	if !ok || e.Code != httpapi.CodeUnauthenticated {
		t.Errorf("%s: got user %+v, error %v; want %s", what, u, err, httpapi.CodeUnauthenticated)
	}
}

func TestIDTokensOfTheLocalProviderAuthenticate(t *testing.T) {
	p, srv := provider(t)
	a, err := jwtauth.New(jwtauth.Options{Issuer: p.Issuer(), Audience: []string{p.ClientID()}, Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range oidcprovider.TestUsers {
		tok, err := oidcprovider.SignIn(t.Context(), srv.Client(), p.Issuer(), p.ClientID(), redirect, u.Login)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range []string{"Bearer " + tok.IDToken, "bearer " + tok.IDToken, tok.IDToken} {
			got, err := a.Authenticate(request(h))
			if err != nil || got != (domain.User{ID: u.Login, Name: u.Name}) {
				t.Errorf("%s (%.7s...): %+v, %v", u.Login, h, got, err)
			}
		}
		// The access token has the audience but no name: the API needs a name.
		got, err := a.Authenticate(request("Bearer " + tok.AccessToken))
		wantUnauthenticated(t, "access token without a name claim", got, err)

		// Tampered: another user's name in the payload, same signature.
		parts := strings.Split(tok.IDToken, ".")
		other, _ := oidcprovider.SignIn(t.Context(), srv.Client(), p.Issuer(), p.ClientID(), redirect, "bob")
		forged := parts[0] + "." + strings.Split(other.IDToken, ".")[1] + "." + parts[2]
		got, err = a.Authenticate(request("Bearer " + forged))
		wantUnauthenticated(t, "payload swapped", got, err)
	}
}

func TestExpiredAndForeignTokensAreRefused(t *testing.T) {
	p, srv := provider(t)
	tok, err := oidcprovider.SignIn(t.Context(), srv.Client(), p.Issuer(), p.ClientID(), redirect, "alice")
	if err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(11 * time.Minute) }
	expired, _ := jwtauth.New(jwtauth.Options{Issuer: p.Issuer(), Audience: []string{p.ClientID()}, Client: srv.Client(), Now: later})
	got, err := expired.Authenticate(request("Bearer " + tok.IDToken))
	wantUnauthenticated(t, "expired", got, err)
	if err != nil && !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired: %v, want it to say so", err)
	}

	otherAud, _ := jwtauth.New(jwtauth.Options{Issuer: p.Issuer(), Audience: []string{"another-client"}, Client: srv.Client()})
	got, err = otherAud.Authenticate(request("Bearer " + tok.IDToken))
	wantUnauthenticated(t, "another audience", got, err)

	// A token of another provider (other keys, other issuer).
	p2, srv2 := provider(t)
	tok2, err := oidcprovider.SignIn(t.Context(), srv2.Client(), p2.Issuer(), p2.ClientID(), redirect, "alice")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := jwtauth.New(jwtauth.Options{Issuer: p.Issuer(), Audience: []string{p.ClientID()}, Client: srv.Client()})
	got, err = a.Authenticate(request("Bearer " + tok2.IDToken))
	wantUnauthenticated(t, "another provider's token", got, err)
}

func TestAnUnreachableIssuerIsAServerErrorNotAnIdentity(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	a, _ := jwtauth.New(jwtauth.Options{Issuer: srv.URL + "/oidc", Audience: []string{"c"}, Client: srv.Client()})
	u, err := a.Authenticate(request("Bearer a.b.c"))
	if err == nil || u != (domain.User{}) {
		t.Fatalf("got %+v, %v", u, err)
	}
	if _, ok := domain.AsError(err); ok {
		t.Errorf("discovery failure %v is a domain error; want an internal one (500, logged)", err)
	}
}

// Tokens signed here with a key of a static key set: the claims the
// provider never issues (client_id without aud, iat in the future, HS256).
type signer struct {
	key *rsa.PrivateKey
	a   *jwtauth.Authenticator
}

const iss = "https://issuer.example/pool"

func newSigner(t testing.TB) signer {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	a, err := jwtauth.New(jwtauth.Options{Issuer: iss, Audience: []string{"client-1"},
		KeySet: &oidc.StaticKeySet{PublicKeys: []crypto.PublicKey{&key.PublicKey}}})
	if err != nil {
		t.Fatal(err)
	}
	return signer{key, a}
}

func (s signer) sign(t testing.TB, method jwt.SigningMethod, claims jwt.MapClaims) string {
	var key any = s.key
	switch method {
	case jwt.SigningMethodHS256:
		key = []byte("secret")
	case jwt.SigningMethodNone:
		key = jwt.UnsafeAllowNoneSignatureType
	}
	tok, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestClaimsAreCheckedAsTheJWTAuthorizerChecksThem(t *testing.T) {
	s := newSigner(t)
	now := time.Now()
	base := func() jwt.MapClaims {
		return jwt.MapClaims{"iss": iss, "sub": "u1", "name": "User One", "aud": "client-1",
			"exp": now.Add(time.Hour).Unix(), "iat": now.Add(-time.Minute).Unix()}
	}
	ok := map[string]func(jwt.MapClaims){
		"aud":                   func(jwt.MapClaims) {},
		"aud list":              func(c jwt.MapClaims) { c["aud"] = []string{"x", "client-1"} },
		"client_id without aud": func(c jwt.MapClaims) { delete(c, "aud"); c["client_id"] = "client-1" },
		"email when no name":    func(c jwt.MapClaims) { delete(c, "name"); c["email"] = "u1@example.test" },
	}
	for name, mutate := range ok {
		c := base()
		mutate(c)
		if u, err := s.a.Authenticate(request("Bearer " + s.sign(t, jwt.SigningMethodRS256, c))); err != nil || u.ID != "u1" {
			t.Errorf("%s: %+v, %v; want u1", name, u, err)
		}
	}
	bad := map[string]func(jwt.MapClaims){
		"other issuer":             func(c jwt.MapClaims) { c["iss"] = "https://issuer.example/other" },
		"no issuer":                func(c jwt.MapClaims) { delete(c, "iss") },
		"other aud":                func(c jwt.MapClaims) { c["aud"] = "client-2" },
		"aud wins over client_id":  func(c jwt.MapClaims) { c["aud"] = "client-2"; c["client_id"] = "client-1" },
		"neither aud nor clientid": func(c jwt.MapClaims) { delete(c, "aud") },
		"expired":                  func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Second).Unix() },
		"no exp":                   func(c jwt.MapClaims) { delete(c, "exp") },
		"not yet valid":            func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() },
		"issued in the future":     func(c jwt.MapClaims) { c["iat"] = now.Add(time.Hour).Unix() },
		"no sub":                   func(c jwt.MapClaims) { delete(c, "sub") },
		"no name":                  func(c jwt.MapClaims) { delete(c, "name") },
		"sub not a string":         func(c jwt.MapClaims) { c["sub"] = 42 },
		"control chars in sub":     func(c jwt.MapClaims) { c["sub"] = "u\x001" },
	}
	for name, mutate := range bad {
		c := base()
		mutate(c)
		u, err := s.a.Authenticate(request("Bearer " + s.sign(t, jwt.SigningMethodRS256, c)))
		wantUnauthenticated(t, name, u, err)
	}
	u, err := s.a.Authenticate(request("Bearer " + s.sign(t, jwt.SigningMethodHS256, base())))
	wantUnauthenticated(t, "HS256", u, err)
	u, err = s.a.Authenticate(request("Bearer " + s.sign(t, jwt.SigningMethodNone, base())))
	wantUnauthenticated(t, "alg none", u, err)
}

func TestGarbageAuthorizationHeaders(t *testing.T) {
	s := newSigner(t)
	for _, h := range []string{"", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer a.b", "Bearer a.b.c", "Bearer ...",
		"Bearer \xff\xfe", strings.Repeat("A", 20000), "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1MSJ9."} {
		u, err := s.a.Authenticate(request(h))
		wantUnauthenticated(t, "header "+strings.ToValidUTF8(h[:min(len(h), 30)], "?"), u, err)
	}
}

func TestConcurrentFirstUseDiscoversOnce(t *testing.T) {
	p, srv := provider(t)
	a, _ := jwtauth.New(jwtauth.Options{Issuer: p.Issuer(), Audience: []string{p.ClientID()}, Client: srv.Client()})
	tok, err := oidcprovider.SignIn(t.Context(), srv.Client(), p.Issuer(), p.ClientID(), redirect, "bob")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if u, err := a.Authenticate(request("Bearer " + tok.IDToken)); err != nil || u.Name != "Bob" {
				t.Errorf("%+v, %v", u, err)
			}
		})
	}
	wg.Wait()
}

func FuzzAuthenticate(f *testing.F) {
	s := newSigner(f)
	f.Add("Bearer " + s.sign(f, jwt.SigningMethodRS256, jwt.MapClaims{"iss": iss, "sub": "u", "name": "n", "aud": "client-1", "exp": 4102444800}))
	f.Add("Bearer a.b.c")
	f.Add("")
	f.Fuzz(func(t *testing.T, h string) {
		u, err := s.a.Authenticate(request(h))
		if err == nil && (u.ID == "" || u.Name == "") {
			t.Fatalf("authenticated an empty user from %q", h)
		}
		if err != nil {
			if _, ok := domain.AsError(err); !ok {
				t.Fatalf("%q: error %v is not a domain error", h, err)
			}
		}
	})
}

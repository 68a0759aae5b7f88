package stack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/jwtauth"
	"github.com/movietrace/tracinglocks/functions/local/oidcprovider"
	"github.com/movietrace/tracinglocks/web/authconfig"
)

// AuthConfigPath is where the page reads how to sign in: the JSON of
// AuthConfig. In AWS the stack deploys the same file next to the page.
const AuthConfigPath = authconfig.Path

// AuthConfig is the page's sign-in settings, written by the same code
// (web/authconfig) as the deployed stack's auth-config.json.
type AuthConfig = authconfig.Config

// Scope the page asks for: profile for the name claim.
var Scope = strings.Join(authconfig.Scopes, " ")

// startSignIn creates the local OIDC provider served under /oidc/ of the
// stack's own origin and the JWT authenticator that trusts it.
func startSignIn(s *Stack, opts Options, mux *http.ServeMux) (httpapi.Authenticator, error) {
	p, err := oidcprovider.New(oidcprovider.Options{BaseURL: strings.TrimSuffix(s.URL, "/"), TokenTTL: opts.SignInTokenTTL, Users: opts.SignInUsers})
	if err != nil {
		return nil, err
	}
	s.OIDC = p
	mux.Handle(oidcprovider.Base+"/", p.Handler())
	a, err := jwtauth.New(jwtauth.Options{Issuer: p.Issuer(), Audience: []string{p.ClientID()}})
	if err != nil {
		return nil, err
	}
	s.authConfig = authconfig.OIDC(p.Issuer(), p.ClientID(), p.LogoutURL())
	return a, nil
}

func (s *Stack) serveAuthConfig(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_ = json.NewEncoder(w).Encode(s.authConfig)
}

// eitherAuth authenticates a request with a bearer token through the JWT
// authenticator and, only when the stack was started with DevAuth, a
// request without one through the X-Dev-User headers.
type eitherAuth struct {
	jwt httpapi.Authenticator
	dev httpapi.Authenticator // nil unless DevAuth
}

func (e eitherAuth) Name() string {
	if e.dev == nil {
		return e.jwt.Name()
	}
	return e.jwt.Name() + "+" + e.dev.Name()
}

func (e eitherAuth) Authenticate(r *http.Request) (domain.User, error) {
	if e.dev != nil && r.Header.Get("Authorization") == "" {
		return e.dev.Authenticate(r)
	}
	return e.jwt.Authenticate(r)
}

// chooseAuth is the API's authenticator: sign-in through the local OIDC
// provider when opts.SignIn (plus the development headers when
// opts.DevAuth), else the development headers only.
func chooseAuth(s *Stack, opts Options, mux *http.ServeMux) (httpapi.Authenticator, error) {
	var dev httpapi.Authenticator
	if opts.DevAuth || !opts.SignIn {
		var err error
		if dev, err = httpapi.ChooseAuthenticator(devAuthEnv); err != nil {
			return nil, err
		}
	}
	if !opts.SignIn {
		s.authConfig = authconfig.Dev()
		return dev, nil
	}
	jwt, err := startSignIn(s, opts, mux)
	if err != nil {
		return nil, fmt.Errorf("sign-in: %w", err)
	}
	return eitherAuth{jwt: jwt, dev: dev}, nil
}

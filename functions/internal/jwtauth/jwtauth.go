// Package jwtauth authenticates API requests by their bearer JWT the way
// API Gateway's HTTP API JWT authorizer does, for the local stack (in AWS
// the authorizer itself does it and the API reads the claims it passes):
//
//   - the token is the Authorization header's value, with or without the
//     "Bearer " prefix;
//   - its signature must verify with a key of the issuer's JWKS (found
//     through the issuer's /.well-known/openid-configuration), RSA only;
//   - iss must equal the configured issuer;
//   - aud must contain one of the configured audiences, or, when the token
//     has no aud, client_id must be one of them (Cognito access tokens);
//   - exp must be in the future, nbf and iat in the past.
//
// The signature, iss, exp and nbf checks are github.com/coreos/go-oidc/v3's
// verifier. The validated claims then go through httpapi.UserFromClaims,
// the same mapping the Lambda applies to the authorizer's claims.
package jwtauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
)

// Options configure New.
type Options struct {
	// Issuer is the OIDC issuer URL (the iss claim). Required.
	Issuer string
	// Audience lists the accepted aud (or client_id) values. Required.
	Audience []string
	// Client fetches discovery and JWKS (default http.DefaultClient).
	Client *http.Client
	// Now is the clock (default time.Now).
	Now func() time.Time
	// KeySet, when set, replaces discovery and the issuer's JWKS (tests).
	KeySet oidc.KeySet
}

// Authenticator is an httpapi.Authenticator for bearer JWTs.
type Authenticator struct {
	opts Options

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
}

var _ httpapi.Authenticator = (*Authenticator)(nil)

// SigningAlgs are the algorithms API Gateway's JWT authorizer accepts.
var SigningAlgs = []string{oidc.RS256, oidc.RS384, oidc.RS512}

// maxTokenBytes bounds the header value parsed (API Gateway's own request
// header limit is far larger; no legitimate ID token is near this).
const maxTokenBytes = 16 << 10

// New returns an authenticator for opts. The issuer's discovery document
// is fetched on first use (and again after a failed fetch), as the
// authorizer does, so the provider need not be up yet.
func New(opts Options) (*Authenticator, error) {
	if opts.Issuer == "" || len(opts.Audience) == 0 || slices.Contains(opts.Audience, "") {
		return nil, errors.New("jwtauth: Issuer and a non-empty Audience are required")
	}
	if opts.Client == nil {
		opts.Client = http.DefaultClient
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	a := &Authenticator{opts: opts}
	if opts.KeySet != nil {
		a.verifier = oidc.NewVerifier(opts.Issuer, opts.KeySet, a.config())
	}
	return a, nil
}

func (a *Authenticator) config() *oidc.Config {
	// The audience check is ours (aud, else client_id), as the authorizer's.
	return &oidc.Config{SkipClientIDCheck: true, SupportedSigningAlgs: SigningAlgs, Now: a.opts.Now}
}

// Name is logged at startup.
func (a *Authenticator) Name() string { return "jwt-oidc" }

func (a *Authenticator) getVerifier(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.verifier != nil {
		return a.verifier, nil
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(context.WithoutCancel(ctx), a.opts.Client), 10*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(ctx, a.opts.Issuer)
	if err != nil {
		return nil, fmt.Errorf("jwtauth: discovery of %s: %w", a.opts.Issuer, err)
	}
	// The key set outlives this call: it fetches keys with the client, in
	// a context of its own.
	keys := oidc.NewRemoteKeySet(oidc.ClientContext(context.Background(), a.opts.Client), endpoints(p).JWKSURL)
	a.verifier = oidc.NewVerifier(a.opts.Issuer, keys, a.config())
	return a.verifier, nil
}

type discovery struct {
	JWKSURL string `json:"jwks_uri"`
}

func endpoints(p *oidc.Provider) discovery {
	var d discovery
	_ = p.Claims(&d)
	return d
}

func unauthenticated(msg string) error {
	return &domain.Error{Code: httpapi.CodeUnauthenticated, Message: msg}
}

// Token is the bearer token of r: the Authorization header with or without
// the "Bearer " prefix, or "" when there is none.
func Token(r *http.Request) string {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	if len(h) >= 7 && strings.EqualFold(h[:7], "bearer ") {
		h = strings.TrimSpace(h[7:])
	}
	return h
}

// Authenticate validates r's bearer token and returns its user.
func (a *Authenticator) Authenticate(r *http.Request) (domain.User, error) {
	raw := Token(r)
	if raw == "" {
		return domain.User{}, unauthenticated("no bearer token")
	}
	if len(raw) > maxTokenBytes {
		return domain.User{}, unauthenticated("the bearer token is too long")
	}
	claims, err := a.Validate(r.Context(), raw)
	if err != nil {
		return domain.User{}, err
	}
	return httpapi.UserFromClaims(claims)
}

// Validate checks raw as the JWT authorizer does and returns its claims as
// the authorizer passes them to the integration: every value a string
// (strings as they are, other JSON values in their JSON text).
func (a *Authenticator) Validate(ctx context.Context, raw string) (map[string]string, error) {
	v, err := a.getVerifier(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := v.Verify(ctx, raw)
	if err != nil {
		var expired *oidc.TokenExpiredError
		if errors.As(err, &expired) {
			return nil, unauthenticated("the token has expired")
		}
		return nil, unauthenticated("the bearer token is not valid")
	}
	var all map[string]json.RawMessage
	if err := tok.Claims(&all); err != nil {
		return nil, unauthenticated("the token's claims are not a JSON object")
	}
	claims := make(map[string]string, len(all))
	for k, v := range all {
		var s string
		if json.Unmarshal(v, &s) == nil {
			claims[k] = s
		} else {
			claims[k] = string(v)
		}
	}
	if !a.audienceOK(tok.Audience, all) {
		return nil, unauthenticated("the token is not for this API (aud / client_id)")
	}
	if !tok.IssuedAt.IsZero() && tok.IssuedAt.After(a.opts.Now()) {
		return nil, unauthenticated("the token is issued in the future (iat)")
	}
	return claims, nil
}

// audienceOK: aud when present, else client_id, must name an audience.
func (a *Authenticator) audienceOK(aud []string, all map[string]json.RawMessage) bool {
	if _, has := all["aud"]; has {
		for _, x := range aud {
			if slices.Contains(a.opts.Audience, x) {
				return true
			}
		}
		return false
	}
	var clientID string
	if err := json.Unmarshal(all["client_id"], &clientID); err != nil {
		return false
	}
	return slices.Contains(a.opts.Audience, clientID)
}

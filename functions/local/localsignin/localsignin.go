// Package localsignin signs a test user in to a running `make run` without
// a browser, the way its page does: it reads the page's /auth-config.json
// (the issuer and client ID) and runs the authorization code flow with PKCE
// against the local OIDC provider (oidcprovider.SignIn). `make smoke` and
// `make import` use it, so neither needs the development headers.
//
// Only make run's provider on a loopback address: its sign-in page takes the
// test user as a parameter, which a real provider (Cognito) does not.
package localsignin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/movietrace/tracinglocks/functions/local/oidcprovider"
)

// ConfigPath is where the page reads how to sign in (stack.AuthConfigPath;
// a test keeps them equal).
const ConfigPath = "/auth-config.json"

var (
	// ErrNoSignIn: the stack signs nobody in (make run -dev-only).
	ErrNoSignIn = errors.New("the page does not sign in (make run -dev-only)")
	// ErrNotLoopback: the page or the issuer is not make run's.
	ErrNotLoopback = errors.New("not on a loopback address")
)

// config is the part of stack.AuthConfig used here.
type config struct {
	Mode      string `json:"mode"`
	Authority string `json:"authority"`
	ClientID  string `json:"clientId"`
}

// SignIn signs login (alice, bob) in to the stack whose page is at page
// and returns the ID token the page would send.
func SignIn(ctx context.Context, page, login string) (string, error) {
	base, err := Loopback(page)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base.String(), "/")+ConfigPath, nil)
	if err != nil {
		return "", err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("is make run running at %s? %w", page, err)
	}
	defer res.Body.Close()
	var cfg config
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&cfg); err != nil || res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s, %v", ConfigPath, res.Status, err)
	}
	if cfg.Mode != "oidc" {
		return "", fmt.Errorf("%s (mode %q): %w", page, cfg.Mode, ErrNoSignIn)
	}
	if _, err := Loopback(cfg.Authority); err != nil {
		return "", fmt.Errorf("issuer: %w (only make run's local provider)", err)
	}
	t, err := oidcprovider.SignIn(ctx, http.DefaultClient, cfg.Authority, cfg.ClientID, base.String(), login)
	if err != nil {
		return "", err
	}
	if t.IDToken == "" {
		return "", errors.New("the token response has no ID token")
	}
	return t.IDToken, nil
}

// Loopback parses raw as an http URL on a loopback address.
func Loopback(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		return nil, fmt.Errorf("%q is not an http URL: %w", raw, ErrNotLoopback)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%q: %w", raw, ErrNotLoopback)
	}
	return u, nil
}

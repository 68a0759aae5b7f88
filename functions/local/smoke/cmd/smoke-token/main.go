// Command smoke-token signs in to a running `make run` as one of its local
// OIDC provider's test users and prints the ID token, for `make smoke`'s
// curl walk (functions/local/run/smoke.sh): it reads the page's
// /auth-config.json (the issuer and the client ID the page uses) and runs
// the authorization code flow with PKCE against the provider, as the page
// does in a browser (oidcprovider.SignIn). No development header is involved.
//
//	go run ./functions/local/smoke/cmd/smoke-token -url http://127.0.0.1:8080/ -login alice
//
// Only the local provider on a loopback address: its sign-in page takes the
// test user as a parameter, which a real provider (Cognito) does not (the
// deployed walk is `make smoke-deployed`, in a browser).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/movietrace/tracinglocks/functions/local/oidcprovider"
	"github.com/movietrace/tracinglocks/functions/local/stack"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("smoke-token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	page := fs.String("url", "http://127.0.0.1:8080/", "the page of a running make run")
	login := fs.String("login", "", "the local provider's test user (alice, bob)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *login == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: smoke-token [-url http://127.0.0.1:8080/] -login alice")
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tok, err := signIn(ctx, *page, *login)
	if err != nil {
		fmt.Fprintln(stderr, "smoke-token:", err)
		return 1
	}
	fmt.Fprintln(stdout, tok)
	return 0
}

// signIn returns an ID token of login from the provider the page at page
// signs in with.
func signIn(ctx context.Context, page, login string) (string, error) {
	base, err := loopback(page)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base.String(), "/")+stack.AuthConfigPath, nil)
	if err != nil {
		return "", err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("is make run running at %s? %w", page, err)
	}
	defer res.Body.Close()
	var cfg stack.AuthConfig
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&cfg); err != nil || res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s, %v", stack.AuthConfigPath, res.Status, err)
	}
	if cfg.Mode != "oidc" {
		return "", fmt.Errorf("the page at %s does not sign in (mode %q): make run was started with -dev-only", page, cfg.Mode)
	}
	if _, err := loopback(cfg.Authority); err != nil {
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

// loopback parses raw as an http URL on a loopback address.
func loopback(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		return nil, fmt.Errorf("%q is not an http URL", raw)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%q is not on a loopback address", raw)
	}
	return u, nil
}

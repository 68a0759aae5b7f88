// Command smoke-token signs in to a running `make run` as one of its local
// OIDC provider's test users and prints the ID token, for `make smoke`'s
// curl walk (functions/local/run/smoke.sh), through package localsignin:
// the page's /auth-config.json, then the authorization code flow with PKCE
// against the provider, as the page does in a browser. No development
// header is involved.
//
//	go run ./functions/tools/smoke/cmd/smoke-token -url http://127.0.0.1:8080/ -login alice
//
// Only the local provider on a loopback address: its sign-in page takes the
// test user as a parameter, which a real provider (Cognito) does not (the
// deployed walk is `make smoke-deployed`, in a browser).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/movietrace/tracinglocks/functions/local/localsignin"
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
	tok, err := localsignin.SignIn(ctx, *page, *login)
	if err != nil {
		fmt.Fprintln(stderr, "smoke-token:", err)
		return 1
	}
	fmt.Fprintln(stdout, tok)
	return 0
}

// Command smoke-browser runs the browser smoke walk (package smoke) against
// a page: `make smoke-deployed ENV=dev` against the deployed one.
//
//	go run ./functions/tools/smoke/cmd/smoke-browser -url https://d123.cloudfront.net/ -username smoke@yourdomain -password ...
//	go run ./functions/tools/smoke/cmd/smoke-browser -url http://127.0.0.1:8080/ -login alice
//
// The password may come from SMOKE_PASSWORD instead of the command line.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/tools/smoke"
)

func main() {
	var o smoke.Options
	flag.StringVar(&o.URL, "url", "", "the page's URL")
	flag.StringVar(&o.Login, "login", "", "local OIDC provider's test user (alice, bob)")
	flag.StringVar(&o.Username, "username", "", "Cognito user (managed login)")
	flag.StringVar(&o.MovieID, "movie", "", "movie to trace (default: the first listed)")
	flag.StringVar(&o.Out, "out", "", "directory for a screenshot per step")
	flag.DurationVar(&o.TraceTimeout, "trace-timeout", 10*time.Minute, "how long the trace may take")
	flag.Parse()
	o.Password = os.Getenv(envvar.SmokePassword)
	o.Log = func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if o.Out != "" {
		if err := os.MkdirAll(o.Out, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := smoke.Walk(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "smoke: the browser path passed")
}

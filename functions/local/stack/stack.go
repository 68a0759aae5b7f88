// Package stack is the local stack behind `make run`: given a DynamoDB
// endpoint (DynamoDB Local) and an SQS endpoint (the emulator), it creates
// the tables and the queue, seeds sample movies, and runs in one process
// what AWS runs as three Lambdas and two event source mappings:
//
//   - the browser API handler, over HTTP on 127.0.0.1, with the Analyze page
//     (package web) at / and the API at /movies... and /openapi.json, the
//     same paths as in AWS;
//   - a StreamPoller that reads the movies table's stream with the DynamoDB
//     Streams API and invokes the stream processor's handler with real
//     events.DynamoDBEvent batches, honouring BatchItemFailures as the event
//     source mapping does;
//   - QueuePollers that long-poll the trace queue and invoke the worker's
//     handler with real events.SQSEvent batches, deleting only what
//     succeeded.
//
// With SignIn (what `make run` does), the stack also serves a local OpenID
// Connect provider (package oidcprovider) under /oidc/ and the API accepts
// only bearer JWTs it validates as API Gateway's JWT authorizer does
// (package jwtauth); the page signs in through it. The development identity
// (X-Dev-User and X-Dev-User-Name headers, DEV_AUTH=1, which the API refuses
// to enable inside Lambda) is then accepted only with DevAuth, for curl and
// tests; a stack started without SignIn has only the development identity.
// Tests start the same stack in-process against their emulators.
package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/ingest"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/local/oidcprovider"
	"github.com/movietrace/tracinglocks/functions/local/web"
	"github.com/movietrace/tracinglocks/functions/local/webauth"
)

// Options configure a stack. Only the two endpoints are required.
type Options struct {
	DynamoDBEndpoint string // e.g. http://127.0.0.1:8000
	SQSEndpoint      string
	// S3Endpoint is the S3 emulator (default SQSEndpoint: fauxqs serves
	// both); the movies bucket lives there (movies.go).
	S3Endpoint string

	// Addr is where the HTTP server listens; it must be a loopback address.
	// Default 127.0.0.1:0 (a free port).
	Addr string
	// Prefix names the tables and queue (<prefix>-movies, ...); default
	// "local". Tests sharing one set of emulators use a unique prefix each.
	Prefix string
	// LeaseDuration is the analysis and tracing lease length (default
	// domain.DefaultLeaseDuration, 15 min). Demos and tests make it short
	// to see a crashed browser's lease expire.
	LeaseDuration time.Duration
	// FrameDelay is how long the synthetic tracer takes per frame (default
	// 40 ms), so that progress is visible; negative means none.
	FrameDelay time.Duration
	// ProgressEvery is how often the worker renews its lease and publishes
	// progress (default 1 s; in AWS min(30 s, lease/3)).
	ProgressEvery time.Duration
	// Tracer replaces the synthetic tracer (FrameDelay and FailAt then do
	// not apply).
	Tracer tracer.Tracer
	// FailAt makes the synthetic tracer fail, with its user-facing summary,
	// on these movies at these frames, to show the failure path. Default:
	// {FailingMovieID: 60}; an empty non-nil map fails nothing.
	FailAt map[string]int
	// Movies are seeded as rows if absent; by default the sample clips
	// (samples.go: real movies of SampleMovies' IDs, sizes and markers,
	// uploaded and ingested). Seeding an existing movie is a no-op, so a
	// restart keeps what was there.
	Movies []domain.Movie
	// MaxUploadBytes is the largest movie file POST /movies accepts
	// (default httpapi.DefaultMaxUploadBytes).
	MaxUploadBytes int64
	// SampleDir caches the generated sample clips (default: a directory
	// under os.TempDir()).
	SampleDir string
	// NoSeed seeds nothing.
	NoSeed bool
	// VisibilityTimeout of the trace queue (default 2 min): a message whose
	// invocation neither deleted it nor finished comes back after it.
	VisibilityTimeout time.Duration
	// StreamBatchSize, StreamMaxRetries: as the event source mapping's
	// BatchSize and MaximumRetryAttempts (defaults 100 and 3).
	StreamBatchSize  int
	StreamMaxRetries int
	// QueueBatchSize and QueueConcurrency: messages per worker invocation
	// (default 1, as in the stack) and how many invocations may run at once
	// (default 4).
	QueueBatchSize   int
	QueueConcurrency int
	// WorkerInvocation bounds each worker invocation as Lambda's timeout
	// does (default DefaultWorkerInvocation, 5 min; WORKER_INVOCATION_SECONDS
	// in make run). A trace longer than one invocation continues in the
	// next one (docs/worker.md, "Segments").
	WorkerInvocation time.Duration
	// SweepEvery is how often the sweeper finalises stale tracing leases
	// nobody took over (default 30 s; every 5 minutes in AWS).
	SweepEvery time.Duration
	// ReadHeaderTimeout and IdleTimeout of the HTTP server (defaults
	// DefaultReadHeaderTimeout, DefaultIdleTimeout).
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	// Log receives the stack's and the handlers' logs (default: discard).
	Log *slog.Logger
	// SignIn serves the local OIDC provider under /oidc/ and makes the API
	// validate bearer JWTs from it; the page then signs in (Alice, Bob).
	SignIn bool
	// DevAuth, with SignIn, also accepts the X-Dev-User headers on requests
	// without an Authorization header (curl, tests). Without SignIn the
	// development identity is the only one.
	DevAuth bool
	// SignInTokenTTL is the lifetime of the tokens the local provider
	// issues (default 10 min); tests make it short to see renewals.
	SignInTokenTTL time.Duration
	// SignInUsers are the local provider's users (default
	// oidcprovider.TestUsers: Alice and Bob); tests add their own.
	SignInUsers []oidcprovider.User
}

// Stack is a running local stack.
type Stack struct {
	// URL is the page's address, e.g. http://127.0.0.1:8080/.
	URL      string
	Tables   dynamo.Tables
	QueueURL string
	// PoisonQueueURL is where the stream processor sets aside records that
	// can never decode (as the CDK stack's stream poison queue).
	PoisonQueueURL string
	// Clients talk to the same emulators, for tests.
	DynamoDB *dynamodb.Client
	Streams  *dynamodbstreams.Client
	SQS      *sqs.Client
	Movies   *dynamo.MovieStore
	// The movies bucket, its upload queue and the ingest (movies.go).
	S3             *s3.Client
	Files          *s3store.Store
	UploadQueueURL string
	Ingest         *ingest.Handler
	storageOrigin  string
	s3Front        *s3Front
	// Lease is the lease duration the API grants.
	Lease time.Duration
	// OIDC is the local OpenID Connect provider (nil without SignIn).
	OIDC *oidcprovider.Provider

	authConfig AuthConfig

	log        *slog.Logger
	server     *http.Server
	serveDone  chan error
	stopPoll   context.CancelFunc // ends polling
	stopInvoke context.CancelFunc // ends invocations in flight
	pollers    sync.WaitGroup
	stopOnce   sync.Once
	stopErr    error
}

// Region and credentials of every local client: dummy values that can never
// reach AWS.
const Region = "us-east-1"

// LocalConfig is the SDK configuration for the emulators.
func LocalConfig() aws.Config {
	return aws.Config{Region: Region, Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
}

func (o *Options) defaults() error {
	if o.DynamoDBEndpoint == "" || o.SQSEndpoint == "" {
		return errors.New("stack: DynamoDBEndpoint and SQSEndpoint are required")
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if err := loopbackOnly(o.Addr); err != nil {
		return err
	}
	if o.SampleDir == "" {
		o.SampleDir = filepath.Join(os.TempDir(), "tracinglocks-samples")
	}
	if o.Prefix == "" {
		o.Prefix = "local"
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = domain.DefaultLeaseDuration
	}
	if o.FrameDelay == 0 {
		o.FrameDelay = 40 * time.Millisecond
	} else if o.FrameDelay < 0 {
		o.FrameDelay = 0
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = time.Second
	}
	if o.FailAt == nil {
		o.FailAt = map[string]int{FailingMovieID: 60}
	}
	if o.VisibilityTimeout <= 0 {
		o.VisibilityTimeout = 2 * time.Minute
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = 30 * time.Second
	}
	if o.WorkerInvocation <= 0 {
		o.WorkerInvocation = DefaultWorkerInvocation
	}
	if o.QueueConcurrency <= 0 {
		o.QueueConcurrency = 4
	}
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return nil
}

// loopbackOnly refuses an address that is not on a loopback interface: the
// stack trusts identity headers, so it must never face a network.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("stack: address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("stack: address %q is not a loopback address: the local stack trusts X-Dev-User headers and must listen on 127.0.0.1 only", addr)
}

// Start builds and starts the stack. ctx bounds the startup only; the stack
// runs until Stop.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	cfg := LocalConfig()
	ddbEP, sqsEP := opts.DynamoDBEndpoint, opts.SQSEndpoint
	s := &Stack{
		Tables:   dynamo.Tables{Movies: opts.Prefix + "-movies", Frames: opts.Prefix + "-frames", Audit: opts.Prefix + "-audit"},
		DynamoDB: dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = &ddbEP }),
		Streams:  dynamodbstreams.NewFromConfig(cfg, func(o *dynamodbstreams.Options) { o.BaseEndpoint = &ddbEP }),
		SQS:      sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = &sqsEP }),
		Lease:    opts.LeaseDuration,
		log:      opts.Log,
	}
	s.Movies = dynamo.NewMovieStore(s.DynamoDB, s.Tables.Movies)

	if err := dynamo.CreateTables(ctx, s.DynamoDB, s.Tables); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	queueURL, queueARN, err := createQueue(ctx, s.SQS, opts.Prefix+"-trace-jobs", opts.VisibilityTimeout)
	if err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	s.QueueURL = queueURL
	if s.PoisonQueueURL, _, err = queue(ctx, s.SQS, opts.Prefix+"-stream-poison", map[string]string{"MessageRetentionPeriod": "1209600"}); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	if !opts.NoSeed && opts.Movies != nil {
		if err := seed(ctx, s.Movies, opts.Movies); err != nil {
			return nil, fmt.Errorf("stack: %w", err)
		}
	}
	ingestPoller, err := s.startMovieStorage(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("stack: movie storage: %w", err)
	}
	streamARN, err := streamproc.StreamARN(ctx, s.DynamoDB, s.Tables.Movies)
	if err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}

	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("stack: listen on %s: %w", opts.Addr, err)
	}
	s.URL = "http://" + ln.Addr().String() + "/"
	mux := http.NewServeMux()
	auth, err := chooseAuth(s, opts, mux)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("stack: %w", err)
	}
	parts, err := wire(s, opts, auth)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("stack: %w", err)
	}
	web.RegisterWithStorage(mux, s.storageOrigin) // frame images come from the S3 emulator
	webauth.Register(mux)
	mux.HandleFunc("GET "+AuthConfigPath, s.serveAuthConfig)
	mux.Handle("/", parts.api)
	s.server = &http.Server{
		Handler:           hostGuard(mux),
		ReadHeaderTimeout: opts.ReadHeaderTimeout,
		IdleTimeout:       opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(opts.Log.Handler(), slog.LevelWarn),
	}
	s.serveDone = make(chan error, 1)
	go func() { s.serveDone <- s.server.Serve(ln) }()

	pollCtx, stopPoll := context.WithCancel(context.Background())
	invokeCtx, stopInvoke := context.WithCancel(context.Background())
	s.stopPoll, s.stopInvoke = stopPoll, stopInvoke

	sp := &StreamPoller{
		Client: s.Streams, StreamARN: streamARN, Handle: parts.stream,
		Log: opts.Log.With(slog.String("component", "stream-poller")), BatchSize: opts.StreamBatchSize, MaxRetries: opts.StreamMaxRetries,
	}
	s.pollers.Go(func() { sp.Run(pollCtx, invokeCtx) })
	s.pollers.Go(func() { ingestPoller.Run(pollCtx, invokeCtx) })
	for i := range opts.QueueConcurrency {
		qp := &QueuePoller{
			Client: s.SQS, QueueURL: queueURL, QueueARN: queueARN, Region: Region,
			Handle: parts.worker, Convert: parts.convert, BatchSize: opts.QueueBatchSize, Invoke: opts.WorkerInvocation,
			Log: opts.Log.With(slog.String("component", "queue-poller"), slog.Int("poller", i)),
		}
		s.pollers.Go(func() { qp.Run(pollCtx, invokeCtx) })
	}
	s.pollers.Go(func() {
		runSweeper(pollCtx, parts.sweeper, opts.SweepEvery, opts.Log.With(slog.String("component", "sweeper")))
	})
	if !opts.NoSeed && opts.Movies == nil {
		// Real clips, through the upload path and the ingest (samples.go).
		if err := s.seedSamples(ctx, opts.SampleDir, 3*time.Minute); err != nil {
			_ = s.Stop()
			return nil, fmt.Errorf("stack: sample movies: %w", err)
		}
	}
	opts.Log.Info("local stack started", slog.String("url", s.URL), slog.String("prefix", opts.Prefix),
		slog.Duration("lease", opts.LeaseDuration), slog.Duration("frameDelay", opts.FrameDelay))
	return s, nil
}

// Grace bounds how long Stop lets handler invocations in flight finish
// before cancelling their context.
const Grace = 10 * time.Second

// Stop shuts the HTTP server down (requests in flight finish), stops
// polling, lets invocations in flight finish for up to Grace and then
// cancels them. It is safe to call more than once.
func (s *Stack) Stop() error {
	s.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var errs []error
		if err := s.server.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop HTTP server: %w", err))
		}
		if err := <-s.serveDone; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("HTTP server: %w", err))
		}
		s.stopPoll()
		done := make(chan struct{})
		go func() { s.pollers.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(Grace):
			s.log.Warn("handler invocations still running after the grace period: cancelling them")
			s.stopInvoke()
			<-done
		}
		s.stopInvoke()
		if s.s3Front != nil {
			if err := s.s3Front.stop(ctx); err != nil {
				errs = append(errs, fmt.Errorf("stop S3 front: %w", err))
			}
		}
		s.stopErr = errors.Join(errs...)
		s.log.Info("local stack stopped")
	})
	return s.stopErr
}

// seed creates each movie unless a movie with its ID exists.
func seed(ctx context.Context, store *dynamo.MovieStore, movies []domain.Movie) error {
	for _, m := range movies {
		err := store.Create(ctx, m)
		if e, ok := domain.AsError(err); ok && e.Code == domain.CodeExists {
			continue // exists: keep it as it is
		}
		if err != nil {
			return fmt.Errorf("seed movie %s: %w", m.ID, err)
		}
	}
	return nil
}

// FailingMovieID is the sample movie whose trace fails at frame 60 (an
// injected failure of the synthetic tracer), to show a failed trace's safe
// summary.
const FailingMovieID = "damaged-footage"

// SampleMovies are the movies `make run` starts with: short enough that a
// whole trace takes seconds at the default frame delay; two have a marker
// placed so that a trace can start at once, and FailingMovieID's trace
// fails.
func SampleMovies(now time.Time) []domain.Movie {
	mk := func(id, title string, frames int, fps float64, markers ...domain.Marker) domain.Movie {
		m, err := domain.NewMovie(id, title, frames, fps, now)
		if err != nil {
			panic(err) // constant input
		}
		if markers != nil {
			m.Settings.Markers = markers
		}
		return m
	}
	return []domain.Movie{
		mk("zebrafish-larva", "Zebrafish larva, free swimming", 240, 24, domain.Marker{ID: "m1", Label: "Head", X: 0.42, Y: 0.48}),
		mk("mouse-open-field", "Mouse, open-field trial", 600, 30),
		mk("fly-courtship", "Fruit fly courtship", 360, 60),
		mk(FailingMovieID, "Damaged footage (its trace fails)", 240, 24, domain.Marker{ID: "m1", Label: "Target", X: 0.6, Y: 0.4}),
	}
}

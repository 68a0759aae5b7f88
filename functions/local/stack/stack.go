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
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/ingest"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
	"github.com/movietrace/tracinglocks/functions/local/oidcprovider"
	"github.com/movietrace/tracinglocks/web"
	"github.com/movietrace/tracinglocks/web/webauth"
)

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
	// EdgeHeaders are the response headers of the page's origin in the
	// deployed shape (Options.Edge), nil otherwise.
	EdgeHeaders http.Header

	authConfig AuthConfig
	// signInServers serve the OIDC provider on its own origins in the
	// deployed shape (deployed.go).
	signInServers []*http.Server

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

// LocalConfig is the SDK configuration for the emulators: as in AWS, the
// SDK's retries are without the client-side retry quota
// (awsclients.NoQuota), which lost answers would drain (issue 20).
func LocalConfig() aws.Config {
	return aws.Config{Region: Region, Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		Retryer: awsclients.NoQuota}
}

// Start builds and starts the stack. ctx bounds the startup only; the stack
// runs until Stop.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	cfg := LocalConfig()
	if opts.Retryer != nil {
		cfg.Retryer = opts.Retryer
	}
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
	var auth httpapi.Authenticator
	if opts.Edge != nil {
		auth, err = s.startDeployedSignIn(opts)
	} else {
		auth, err = chooseAuth(s, opts, mux)
	}
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
	var handler http.Handler = mux
	if opts.Edge != nil {
		if handler, err = s.deployedShape(opts.Edge, mux, parts.api); err != nil {
			ln.Close()
			return nil, fmt.Errorf("stack: %w", err)
		}
	} else {
		mux.Handle("/", parts.api)
	}
	s.server = &http.Server{
		Handler:           hostGuard(handler),
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

// Kill stops the stack as a killed process would: every invocation in
// flight (an ingest, a trace segment, a sweep) has its context cancelled at
// once, wherever it is between two writes, and nothing more is polled. The
// fault suite restarts a stack on the same tables after it.
func (s *Stack) Kill() error {
	s.stopInvoke()
	return s.Stop()
}

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
		for _, srv := range s.signInServers {
			if err := srv.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("stop sign-in server: %w", err))
			}
		}
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

package stack

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/local/oidcprovider"
	"github.com/movietrace/tracinglocks/infra/edge"
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
	// PartBytes is the part size of an upload in parts (default
	// httpapi.DefaultPartBytes).
	PartBytes int64
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
	// PurgeGrace is how long a deleted movie's row stays (deleting) while
	// the sweeper removes its files, so that a writer that raced the delete
	// is cleaned up too (default 1 minute; purge.DefaultGrace in AWS, longer
	// than a Lambda can run; locally every writer is in this process).
	PurgeGrace time.Duration
	// ReadHeaderTimeout and IdleTimeout of the HTTP server (defaults
	// DefaultReadHeaderTimeout, DefaultIdleTimeout).
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	// Retryer replaces the SDK retryer of every client (default
	// awsclients.NoQuota, as in AWS); the fault suite passes one whose
	// client-side retry quota is already drained (issue 20).
	Retryer func() aws.Retryer
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
	// Edge, when set, starts the stack in the deployed shape (deployed.go):
	// the page served with the response headers of the synthesized
	// template's CloudFront policy, the API reached through its path
	// patterns only, and the OIDC provider on two other origins (the
	// issuer's and the sign-in pages'), as Cognito is. It implies SignIn.
	Edge *edge.Edge
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
	if o.PurgeGrace <= 0 {
		o.PurgeGrace = time.Minute
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

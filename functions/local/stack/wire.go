package stack

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	jobqueue "github.com/movietrace/tracinglocks/functions/internal/queue"
	"github.com/movietrace/tracinglocks/functions/internal/sweeper"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/wiring"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

// parts are the three handlers the stack runs.
type parts struct {
	api     http.Handler
	stream  StreamHandler
	worker  QueueHandler
	convert MessageConverter
	sweeper *sweeper.Sweeper
}

// devAuthEnv is the process environment with DEV_AUTH=1, for the
// development identity (see chooseAuth): the local process is not Lambda,
// so the API accepts the X-Dev-User headers. (If this ever ran inside
// Lambda, httpapi.ChooseAuthenticator would refuse to start.)
func devAuthEnv(k string) string {
	if k == httpapi.EnvDevAuth {
		return "1"
	}
	return os.Getenv(k)
}

// wire builds the handlers the way the Lambda mains do.
func wire(s *Stack, opts Options, auth httpapi.Authenticator) (parts, error) {
	// The Lambda mains' wiring, on the stack's tables, queues and bucket.
	cfg := config.Config{Tables: config.Tables(s.Tables), QueueURL: s.QueueURL, PoisonQueueURL: s.PoisonQueueURL,
		LeaseDuration: opts.LeaseDuration, MaxUploadBytes: opts.MaxUploadBytes, PartBytes: opts.PartBytes}
	clients := awsclients.Clients{DynamoDB: s.DynamoDB, Streams: s.Streams, SQS: s.SQS, S3: s.S3}
	api, err := wiring.API(cfg, clients, s.Files, auth, opts.Log.With("component", "api"), nil)
	if err != nil {
		return parts{}, fmt.Errorf("API handler: %w", err)
	}
	sp, err := wiring.StreamProcessor(cfg, clients, opts.Log.With("component", "streamprocessor"))
	if err != nil {
		return parts{}, fmt.Errorf("stream processor: %w", err)
	}

	tr := opts.Tracer
	if tr == nil {
		if tr, err = localTracer(s, opts); err != nil {
			return parts{}, err
		}
	}
	// Progress is published with each lease renewal; locally renew often,
	// so that the page's progress moves smoothly. Lambda's 5 minutes leave
	// the stop margin and start reserve at their defaults (10 s, 30 s); a
	// short local invocation scales them, so that each one still traces.
	w, err := wiring.Worker(cfg, clients, tr, opts.Log.With("component", "worker"), os.Getenv,
		func(o *worker.Options) {
			o.RenewEvery = opts.ProgressEvery
			o.StopMargin, o.StartReserve = worker.MarginsFor(opts.WorkerInvocation)
		})
	if err != nil {
		return parts{}, err
	}
	sw, err := wiring.Sweeper(cfg, clients, opts.Log.With("component", "sweeper"), s.Files, opts.PurgeGrace)
	if err != nil {
		return parts{}, err
	}
	return parts{api: api, stream: sp.Handle, worker: w.Handle, convert: jobqueue.LambdaMessage, sweeper: sw}, nil
}

// localTracer is the video tracer on the stack's movies bucket for movies
// with an ingested video (as in AWS), and the synthetic tracer for the
// seeded movies without a file and the injected failures (FailAt), which
// are the tests' doubles.
func localTracer(s *Stack, opts Options) (tracer.Tracer, error) {
	synthetic := syntheticTracer(opts.FrameDelay, opts.FailAt)
	if s.Files == nil {
		return synthetic, nil
	}
	o, err := wiring.MovieFrames(s.Files)
	if err != nil {
		return nil, err
	}
	video, err := tracer.NewVideo(o)
	if err != nil {
		return nil, err
	}
	return tracer.Func(func(ctx context.Context, m domain.Movie, plan domain.TracePlan, emit func(domain.Frame) error) error {
		if _, fail := opts.FailAt[m.ID]; m.Video == nil || fail {
			return synthetic.Trace(ctx, m, plan, emit)
		}
		return video.Trace(ctx, m, plan, emit)
	}), nil
}

// syntheticTracer is the built-in synthetic tracer at the given per-frame
// delay, failing (with its safe summary) on the movies of failAt at the
// given frame.
func syntheticTracer(delay time.Duration, failAt map[string]int) tracer.Tracer {
	ok := tracer.NewSynthetic(tracer.WithDelay(delay))
	failing := map[string]tracer.Tracer{}
	for id, frame := range failAt {
		failing[id] = tracer.NewSynthetic(tracer.WithDelay(delay), tracer.WithFailureAt(frame))
	}
	return tracer.Func(func(ctx context.Context, m domain.Movie, plan domain.TracePlan, emit func(domain.Frame) error) error {
		if f, bad := failing[m.ID]; bad {
			return f.Trace(ctx, m, plan, emit)
		}
		return ok.Trace(ctx, m, plan, emit)
	})
}

// EnvWorkerInvocation is the local worker invocation's budget in whole
// seconds (default 300, as the stack's Lambda timeout).
const EnvWorkerInvocation = envvar.WorkerInvocationSeconds

// DefaultWorkerInvocation is the Lambda timeout of the stack's worker.
const DefaultWorkerInvocation = 5 * time.Minute

// WorkerInvocationFromEnv reads EnvWorkerInvocation: 1-900 seconds, or the
// default when unset.
func WorkerInvocationFromEnv(getenv func(string) string) (time.Duration, error) {
	v := getenv(EnvWorkerInvocation)
	if v == "" {
		return DefaultWorkerInvocation, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 900 {
		return 0, fmt.Errorf("%s=%q must be 1-900 seconds", EnvWorkerInvocation, v)
	}
	return time.Duration(n) * time.Second, nil
}

// runSweeper sweeps every `every` until ctx ends, as the stack's scheduled
// sweeper Lambda does.
func runSweeper(ctx context.Context, s *sweeper.Sweeper, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
				log.Warn("sweep failed; the next one retries", slog.String("error", err.Error()))
			}
		}
	}
}

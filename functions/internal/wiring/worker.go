// Package wiring builds the handlers the way every process runs them: the
// Lambda mains and the local stack call the same functions, so what runs
// locally is what runs in AWS.
package wiring

import (
	"errors"
	"log/slog"

	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/queue"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

// The adapters implement the worker's ports.
var (
	_ worker.Movies = (*dynamo.JobStore)(nil)
	_ worker.Frames = (*dynamo.JobStore)(nil)
	_ worker.Queue  = (*queue.Jobs)(nil)
)

// Worker builds the trace worker: the DynamoDB job store on cfg's tables,
// the SQS queue at cfg.QueueURL (required), cfg's lease duration and the
// worker's own settings from getenv (worker.Options.ApplyEnv). tune, when
// given, adjusts the options last (the local stack renews more often, so
// that progress moves smoothly on the page).
func Worker(cfg config.Config, clients awsclients.Clients, tr tracer.Tracer, log *slog.Logger,
	getenv func(string) string, tune ...func(*worker.Options)) (*worker.Worker, error) {
	if clients.DynamoDB == nil || clients.SQS == nil {
		return nil, errors.New("wiring: the worker needs the DynamoDB and SQS clients")
	}
	if cfg.LeaseDuration <= 0 {
		return nil, errors.New("wiring: the worker needs a positive lease duration")
	}
	jobs, err := queue.NewJobs(clients.SQS, cfg.QueueURL)
	if err != nil {
		return nil, err
	}
	store := dynamo.NewJobStore(dynamo.NewMovieStore(clients.DynamoDB, cfg.Tables.Movies), dynamo.NewFrameStore(clients.DynamoDB, cfg.Tables.Frames))
	o := worker.Options{
		Movies: store, Frames: store, Tracer: tr, Queue: jobs, Log: log,
		LeaseDuration: cfg.LeaseDuration, FrameBatch: dynamo.MaxFencedWrites,
	}
	if err := o.ApplyEnv(getenv); err != nil {
		return nil, err
	}
	for _, t := range tune {
		t(&o)
	}
	return worker.New(o)
}

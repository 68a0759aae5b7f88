package worker

import (
	"fmt"
	"time"

	"github.com/movietrace/tracinglocks/functions/envvar"
)

// Environment variables ApplyEnv reads. The lease duration and the queue
// come from the shared configuration (functions/internal/config), through
// the wiring.
const (
	// EnvStopMargin overrides StopMargin (a Go duration, e.g. "10s").
	EnvStopMargin = envvar.WorkerStopMargin
	// EnvStartReserve overrides StartReserve (a Go duration).
	EnvStartReserve = envvar.WorkerStartReserve
)

// ApplyEnv sets the worker's own settings found in getenv (os.Getenv in
// production) on o. New checks the result.
func (o *Options) ApplyEnv(getenv func(string) string) error {
	for _, s := range []struct {
		env string
		dst *time.Duration
	}{{EnvStopMargin, &o.StopMargin}, {EnvStartReserve, &o.StartReserve}} {
		v := getenv(s.env)
		if v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > 10*time.Minute {
			return fmt.Errorf("worker: %s=%q must be a duration of 1ns-10m", s.env, v)
		}
		*s.dst = d
	}
	return nil
}

// MarginsFor returns the stop margin and start reserve for worker
// invocations that last budget (Lambda's timeout, or the local stack's
// WORKER_INVOCATION_SECONDS): the defaults (10 s, 30 s) for Lambda's
// minutes, and for a short budget a third and a half of it, so that the
// margins shrink with the budget instead of eating it (a fixed 10 s margin
// leaves a 2 s invocation nothing to trace) while still leaving the end of
// each invocation time for its last writes: the frames buffered, the
// hand-off and the continuation's send with its retries.
func MarginsFor(budget time.Duration) (stopMargin, startReserve time.Duration) {
	stopMargin = min(DefaultStopMargin, budget/3)
	startReserve = max(stopMargin, min(DefaultStartReserve, budget/2))
	return stopMargin, startReserve
}

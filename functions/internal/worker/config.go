package worker

import (
	"fmt"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/config"
)

// Environment variables Configure reads, besides the shared configuration.
const (
	// EnvStopMargin overrides StopMargin (a Go duration, e.g. "10s").
	EnvStopMargin = "WORKER_STOP_MARGIN"
	// EnvStartReserve overrides StartReserve (a Go duration).
	EnvStartReserve = "WORKER_START_RESERVE"
)

// Configure applies a function's configuration: the lease duration and the
// queue URL from the shared configuration, and the worker's own settings
// from getenv.
func (w *Worker) Configure(c config.Config, getenv func(string) string) error {
	if c.LeaseDuration <= 0 {
		return fmt.Errorf("worker: lease duration %v must be positive", c.LeaseDuration)
	}
	w.LeaseDuration = c.LeaseDuration
	w.QueueURL = c.QueueURL
	for _, s := range []struct {
		env string
		dst *time.Duration
	}{{EnvStopMargin, &w.StopMargin}, {EnvStartReserve, &w.StartReserve}} {
		v := getenv(s.env)
		if v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > 10*time.Minute {
			return fmt.Errorf("worker: %s=%q must be a duration of 0-10m", s.env, v)
		}
		*s.dst = d
	}
	if w.StartReserve < w.StopMargin {
		return fmt.Errorf("worker: the start reserve (%v) must be at least the stop margin (%v)", w.StartReserve, w.StopMargin)
	}
	return nil
}

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

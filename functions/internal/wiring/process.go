package wiring

import (
	"context"
	"io"
	"log/slog"

	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
)

// Process is what every Lambda main starts from: its configuration, a JSON
// logger at the configured level and the SDK clients.
type Process struct {
	Config  config.Config
	Clients awsclients.Clients
	Log     *slog.Logger
}

// NewProcess reads the configuration from getenv (required: the variables
// this function cannot run without), builds the logger on out at
// LOG_LEVEL and the clients. On an error the returned logger (at info until
// the level is known) is still usable, to report it: a missing or malformed
// setting is a deployment error, best shown by failing the init visibly.
func NewProcess(ctx context.Context, getenv func(string) string, out io.Writer, required ...string) (Process, *slog.Logger, error) {
	log := logging.New(out, slog.LevelInfo)
	cfg, err := config.FromEnv(getenv, required...)
	if err != nil {
		return Process{}, log, err
	}
	log = logging.New(out, cfg.LogLevel)
	clients, err := awsclients.New(ctx, cfg)
	if err != nil {
		return Process{}, log, err
	}
	return Process{Config: cfg, Clients: clients, Log: log}, log, nil
}

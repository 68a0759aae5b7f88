package wiring

import (
	"errors"
	"log/slog"

	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/sweeper"
)

var _ sweeper.Movies = dynamo.SweepStore{}

// Sweeper builds the sweeper on cfg's movies table. rules, when given,
// replace the default (sweeper.StaleTrace).
func Sweeper(cfg config.Config, clients awsclients.Clients, log *slog.Logger, rules ...sweeper.Rule) (*sweeper.Sweeper, error) {
	if clients.DynamoDB == nil || cfg.Tables.Movies == "" {
		return nil, errors.New("wiring: the sweeper needs the DynamoDB client and the movies table")
	}
	return sweeper.New(sweeper.Options{
		Movies: dynamo.SweepStore{MovieStore: dynamo.NewMovieStore(clients.DynamoDB, cfg.Tables.Movies)},
		Rules:  rules, Log: log,
	})
}

package wiring

import (
	"errors"
	"log/slog"

	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
)

// StreamProcessor builds the stream processor: trace jobs to cfg.QueueURL,
// audit items to cfg's audit table, undecodable records set aside on
// cfg.PoisonQueueURL (empty only for an operator's replay, where they stop
// the replay instead).
func StreamProcessor(cfg config.Config, clients awsclients.Clients, log *slog.Logger) (*streamproc.Handler, error) {
	if clients.DynamoDB == nil || clients.SQS == nil {
		return nil, errors.New("wiring: the stream processor needs the DynamoDB and SQS clients")
	}
	return streamproc.New(streamproc.Options{
		Queue: clients.SQS, Audit: clients.DynamoDB, QueueURL: cfg.QueueURL, AuditTable: cfg.Tables.Audit,
		PoisonQueueURL: cfg.PoisonQueueURL, Log: log,
	})
}

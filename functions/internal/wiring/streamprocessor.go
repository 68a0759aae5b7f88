package wiring

import (
	"errors"
	"log/slog"

	"github.com/movietrace/tracinglocks/functions/emf"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
)

// StreamProcessor builds the stream processor: trace jobs to cfg.QueueURL,
// audit items to cfg's audit table, undecodable records set aside on
// cfg.PoisonQueueURL (empty only for an operator's replay, where they stop
// the replay instead).
//
// metrics, when not nil, receives the business metrics as EMF (the Lambda
// passes one on stdout; the replay command none, its stdout is its report).
func StreamProcessor(cfg config.Config, clients awsclients.Clients, log *slog.Logger, metrics ...*emf.Writer) (*streamproc.Handler, error) {
	if clients.DynamoDB == nil || clients.SQS == nil {
		return nil, errors.New("wiring: the stream processor needs the DynamoDB and SQS clients")
	}
	o := streamproc.Options{
		Queue: clients.SQS, Audit: clients.DynamoDB, QueueURL: cfg.QueueURL, AuditTable: cfg.Tables.Audit,
		PoisonQueueURL: cfg.PoisonQueueURL, Log: log,
	}
	if len(metrics) > 0 {
		o.Metrics = metrics[0]
	}
	return streamproc.New(o)
}

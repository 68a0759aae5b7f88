package wiring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/ingest"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
)

// Ingest builds the ingest handler (S3 object-created events to ready or
// ingest_failed movies) on cfg's movies table and the movies bucket (files).
// The Lambda main and the local stack's upload-queue poller both call it.
//
// continueIngest sends a movie's next range to the upload queue
// (IngestContinuation; nil: the ranges of a movie run one after another in
// one invocation, each recorded on the row: tests only).
func Ingest(cfg config.Config, clients awsclients.Clients, files *s3store.Store, log *slog.Logger,
	continueIngest func(ctx context.Context, movieID string) error) (*ingest.Handler, error) {
	if clients.DynamoDB == nil || files == nil {
		return nil, errors.New("wiring: the ingest needs the DynamoDB client and the movies bucket")
	}
	// INGEST_INVOCATION_SECONDS: how long one invocation prepares frames.
	budget, err := ingest.BudgetFromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	return ingest.New(ingest.Options{Movies: dynamo.NewMovieStore(clients.DynamoDB, cfg.Tables.Movies), Files: files, Log: log, Budget: budget,
		Continue: continueIngest})
}

// IngestContinuation sends a movie's next ingest range to the upload queue
// at queueURL (body: ingest.ContinuationBody): the Lambda main and the
// local stack both continue this way.
func IngestContinuation(client *sqs.Client, queueURL string) (func(ctx context.Context, movieID string) error, error) {
	if client == nil || queueURL == "" {
		return nil, errors.New("wiring: the ingest's continuation needs the SQS client and the upload queue's URL")
	}
	return func(ctx context.Context, movieID string) error {
		body := ingest.ContinuationBody(movieID)
		if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &queueURL, MessageBody: &body}); err != nil {
			return fmt.Errorf("continue the ingest of %s: %w", movieID, err)
		}
		return nil
	}, nil
}

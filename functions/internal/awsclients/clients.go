// Package awsclients builds the SDK clients from the default AWS
// configuration, pointing them at local emulators when endpoints are set.
package awsclients

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	awsretry "github.com/aws/aws-sdk-go-v2/aws/retry"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
)

// Clients are the SDK clients of one process.
type Clients struct {
	DynamoDB *dynamodb.Client
	Streams  *dynamodbstreams.Client
	SQS      *sqs.Client
	S3       *s3.Client
}

// New loads the default AWS configuration (in Lambda: the execution role and
// region) and builds the clients. apiOptions (e.g. a request counter) are
// added to every client.
func New(ctx context.Context, c config.Config, apiOptions ...func(*aws.Config)) (Clients, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return Clients{}, fmt.Errorf("load AWS config: %w", err)
	}
	cfg.Retryer = NoQuota
	for _, o := range apiOptions {
		o(&cfg)
	}
	return FromConfig(cfg, c), nil
}

// NoQuota is the SDK's standard retryer without its client-side retry
// quota. The quota (500 tokens, 5 per retry, 10 per timeout) drains after
// about a hundred failed attempts in one process and then stops every retry
// of every call for as long as they keep failing; under lost answers that
// turned committed writes into errors (issue 20). The retries themselves stay
// bounded (3 attempts, jittered backoff); the movie store does not use them
// for its writes at all (it retries lost answers itself, see
// dynamo/lostanswer.go).
func NoQuota() aws.Retryer {
	return awsretry.NewStandard(func(o *awsretry.StandardOptions) { o.RateLimiter = ratelimit.None })
}

// FromConfig builds the clients from an explicit aws.Config (with NoQuota
// when it names no retryer).
func FromConfig(cfg aws.Config, c config.Config) Clients {
	if cfg.Retryer == nil {
		cfg.Retryer = NoQuota
	}
	return Clients{
		DynamoDB: dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { setEndpoint(&o.BaseEndpoint, c.DynamoDBEndpoint) }),
		Streams:  dynamodbstreams.NewFromConfig(cfg, func(o *dynamodbstreams.Options) { setEndpoint(&o.BaseEndpoint, c.DynamoDBEndpoint) }),
		SQS:      sqs.NewFromConfig(cfg, func(o *sqs.Options) { setEndpoint(&o.BaseEndpoint, c.SQSEndpoint) }),
		S3:       s3store.NewClient(cfg, c.S3Endpoint),
	}
}

func setEndpoint(dst **string, endpoint string) {
	if endpoint != "" {
		*dst = aws.String(endpoint)
	}
}

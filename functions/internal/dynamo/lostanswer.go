package dynamo

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsretry "github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Lost answers (issue 20 item 1). A conditional write whose answer was lost
// (a 5xx or a dropped connection after DynamoDB committed) is recognised as
// the success it was only when it is sent again: the retry is refused by the
// state the first attempt wrote, and that refusal carries the row
// (ALL_OLD) on which domain.Replayed sees the command's own effect. That
// retry must therefore not depend on the SDK, whose client-side retry quota
// (500 tokens, 5 per retry) drains after about a hundred lost answers in a
// process and then stops retrying altogether. So the store's own writes are
// sent with the SDK's retries off (sdkOnce: one attempt, the quota is never
// consulted) and retried by the store itself, bounded and jittered
// (retry.Policy, WithConflictRetry), on every error after which a retry is
// safe: the SDK's own classification of transient errors (5xx, throttling,
// connection errors) and transaction conflicts. A conditional refusal is an
// answer, never retried. awsclients also builds every client without the
// quota (ratelimit.None), so other callers' retries do not drain either.

// sdkOnce makes one SDK attempt for a request: the store retries.
func sdkOnce(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }

var transient = awsretry.IsErrorRetryables(awsretry.DefaultRetryables)

// retryableWrite reports whether a store write that failed with err may be
// sent again by the store: it wrote nothing (a transaction conflict), or its
// answer was lost or refused for a passing reason (the SDK's transient
// errors). The condition makes the second attempt safe either way.
func retryableWrite(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	if err == nil || errors.As(err, &ccf) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return IsTransactionConflict(err) || transient.IsErrorRetryable(err) == aws.TrueTernary
}

package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// createQueue creates the trace queue and its dead-letter queue (as the CDK
// stack does: five receives, then the DLQ) and returns the queue's URL and
// ARN. Creating an existing queue with the same attributes is a no-op.
func createQueue(ctx context.Context, client *sqs.Client, name string, visibility time.Duration) (url, arn string, err error) {
	dlqURL, dlqARN, err := queue(ctx, client, name+"-dlq", map[string]string{"MessageRetentionPeriod": "1209600"})
	if err != nil {
		return "", "", err
	}
	_ = dlqURL
	redrive, _ := json.Marshal(map[string]string{"deadLetterTargetArn": dlqARN, "maxReceiveCount": "5"})
	return queue(ctx, client, name, map[string]string{
		"VisibilityTimeout": strconv.Itoa(int(visibility / time.Second)),
		"RedrivePolicy":     string(redrive),
	})
}

func queue(ctx context.Context, client *sqs.Client, name string, attrs map[string]string) (url, arn string, err error) {
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name, Attributes: attrs})
	if err != nil {
		return "", "", fmt.Errorf("create queue %s: %w", name, err)
	}
	got, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return "", "", fmt.Errorf("queue %s attributes: %w", name, err)
	}
	return aws.ToString(out.QueueUrl), got.Attributes[string(sqstypes.QueueAttributeNameQueueArn)], nil
}

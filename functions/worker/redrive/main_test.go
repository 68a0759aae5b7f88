package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// TestMakeRedriveTraceDLQ runs `make redrive-trace-dlq` itself against the
// SQS emulator (the queue URLs given, so no stack lookup): the DLQ's jobs
// end on the trace queue and the DLQ is empty.
func TestMakeRedriveTraceDLQ(t *testing.T) {
	client := testenv.SQS(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	mk := func(prefix string) string {
		out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(testenv.UniqueName(t, prefix))})
		if err != nil {
			t.Fatal(err)
		}
		return *out.QueueUrl
	}
	dlq, jobs := mk("trace-dlq"), mk("trace")
	for i := range 12 {
		body := fmt.Sprintf(`{"movieId":"m%d","jobId":"j","fromFrame":0,"version":1}`, i)
		if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &dlq, MessageBody: &body}); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(ctx, "make", "-s", "-C", "../../..", "redrive-trace-dlq", "TRACE_DLQ_URL="+dlq, "TRACE_QUEUE_URL="+jobs)
	cmd.Env = append(os.Environ(), "AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local",
		envvar.SQSEndpoint+"="+os.Getenv(envvar.SQSEndpoint))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "redrive: moved 12 messages") {
		t.Fatalf("make redrive-trace-dlq: %v\n%s", err, out)
	}
	count := func(url string) string {
		a, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
		if err != nil {
			t.Fatal(err)
		}
		return a.Attributes["ApproximateNumberOfMessages"]
	}
	if n, m := count(jobs), count(dlq); n != "12" || m != "0" {
		t.Fatalf("trace queue %s, DLQ %s messages; want 12 and 0", n, m)
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"-from", "x"}, {"-to", "y"}, {"-from", "x", "-to", "y", "extra"}, {"-from", "x", "-to", "y", "-max", "-1"}, {"-bogus"}} {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), args, func(string) string { return "" }, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr.String())
		}
	}
}

package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// addQueues creates the trace-job queue, its DLQ, and the stream event
// source's on-failure queue; all SQS-encrypted and TLS-only.
func (s *Stack) addQueues() {
	s.TraceDLQ = s.queue("TraceJobDLQ", &awssqs.QueueProps{RetentionPeriod: awscdk.Duration_Days(jsii.Number(14))})
	s.TraceQueue = s.queue("TraceJobQueue", &awssqs.QueueProps{
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(QueueVisibilityFactor * WorkerTimeoutSeconds)),
		RetentionPeriod:   awscdk.Duration_Days(jsii.Number(4)),
		DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: s.TraceDLQ, MaxReceiveCount: jsii.Number(DLQMaxReceiveCount)},
	})
	// Where the stream event source puts a description of the records it
	// gave up on (retries or record age exhausted): shard, sequence numbers,
	// not the records. Read it with the replay tool within the stream's 24 h.
	s.StreamFailures = s.holdingQueue("StreamFailureQueue", "a failure destination (the stream event source's on-failure target)")
}

// holdingQueue creates a queue where failures are set aside for an
// operator (14 days): nothing consumes it automatically, so it has no
// dead-letter queue of its own, which cdk-nag is told (what is the reason);
// its depth is alarmed.
func (s *Stack) holdingQueue(id, what string) awssqs.Queue {
	q := s.queue(id, &awssqs.QueueProps{RetentionPeriod: awscdk.Duration_Days(jsii.Number(14))})
	cdknag.NagSuppressions_AddResourceSuppressions(q, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-SQS3"),
		Reason: jsii.String("This queue is itself " + what + "; nothing consumes it automatically, " +
			"so a dead-letter queue behind it would never receive a message. Its depth is alarmed."),
	}}, jsii.Bool(false))
	return q
}

func (s *Stack) queue(id string, p *awssqs.QueueProps) awssqs.Queue {
	p.Encryption = awssqs.QueueEncryption_SQS_MANAGED
	p.EnforceSSL = jsii.Bool(true)
	// Retained with the tables outside dev: a queue deleted with the stack
	// takes its jobs and failure records with it.
	p.RemovalPolicy = s.removal
	return awssqs.NewQueue(s.Stack, jsii.String(id), p)
}

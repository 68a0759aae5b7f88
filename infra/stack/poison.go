package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/movietrace/tracinglocks/functions/envvar"
)

// addStreamPoison creates the stream processor's poison queue and wires it:
// a stream record that can never decode is sent there (redacted, with its
// shard coordinates) and skipped, instead of being reported as a batch item
// failure, which would block the shard and end with Lambda skipping every
// record behind it (docs/stream.md, "Poison records"). The function may
// only send to it; an alarm fires on the first message.
func (s *Stack) addStreamPoison() {
	s.StreamPoison = s.holdingQueue("StreamPoisonQueue", "where undecodable stream records are set aside for an operator")
	fn := s.Functions[StreamProcessor]
	fn.AddEnvironment(jsii.String(envvar.PoisonQueueURL), s.StreamPoison.QueueUrl(), nil)
	allow(s.Roles[StreamProcessor], "SetAsidePoisonRecords", []*string{s.StreamPoison.QueueArn()}, "sqs:SendMessage")

	period := awscdk.Duration_Minutes(jsii.Number(float64(s.cfg.Alarms.PeriodMinutes)))
	a := awscloudwatch.NewAlarm(s.Stack, jsii.String("StreamPoisonDepthAlarm"), &awscloudwatch.AlarmProps{
		AlarmDescription: jsii.String("The stream processor set aside undecodable movie-row changes (malformed rows): " +
			"their effects (a trace job, audit items) are missing until an operator re-drives them (docs/operations.md#StreamPoisonDepthAlarm)"),
		Metric: s.StreamPoison.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period: period, Statistic: jsii.String("Maximum"),
		}),
		Threshold:          jsii.Number(1),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	s.notify(a)
	awscdk.NewCfnOutput(s.Stack, jsii.String("StreamPoisonQueueUrl"), &awscdk.CfnOutputProps{
		Value: s.StreamPoison.QueueUrl(), Description: jsii.String("Undecodable stream records set aside (POISON_QUEUE_URL)"),
	})
}

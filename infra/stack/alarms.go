package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"
)

// alarms watches the queues' depth, the stream processor's iterator age and
// every function's errors and throttles.
func (s *Stack) alarms(cfg Config, streamFn awslambda.Function) {
	period := awscdk.Duration_Minutes(jsii.Number(float64(cfg.Alarms.PeriodMinutes)))
	var action awscloudwatch.IAlarmAction
	if cfg.Alarms.TopicArn != "" {
		action = awscloudwatchactions.NewSnsAction(awssns.Topic_FromTopicArn(s.Stack, jsii.String("AlarmTopic"), jsii.String(cfg.Alarms.TopicArn)))
	}
	s.alarmAction = action
	alarm := func(id, description string, metric awscloudwatch.IMetric, threshold float64) {
		a := awscloudwatch.NewAlarm(s.Stack, jsii.String(id), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String(description),
			Metric:             metric,
			Threshold:          jsii.Number(threshold),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		if action != nil {
			a.AddAlarmAction(action)
			a.AddOkAction(action)
		}
	}
	depth := &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Maximum")}
	alarm("TraceDlqDepthAlarm", "Trace jobs reached the DLQ: their movies stay tracing until the lease goes stale",
		s.TraceDLQ.MetricApproximateNumberOfMessagesVisible(depth), float64(cfg.Alarms.DLQDepth))
	alarm("StreamFailureDepthAlarm", "The stream processor gave up on movie-row changes: jobs may not be enqueued, audit events may be missing",
		s.StreamFailures.MetricApproximateNumberOfMessagesVisible(depth), float64(cfg.Alarms.DLQDepth))
	alarm("StreamIteratorAgeAlarm", "The stream processor is falling behind the movies stream",
		streamFn.Metric(jsii.String("IteratorAge"), &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Maximum")}),
		float64(cfg.Alarms.IteratorAgeSeconds*1000))
	sum := &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}
	for _, name := range Functions {
		fn := s.Functions[name]
		id := constructID(name)
		alarm(id+"ErrorsAlarm", "The "+name+" function is failing invocations", fn.MetricErrors(sum), float64(cfg.Alarms.FunctionErrors))
		alarm(id+"ThrottlesAlarm", "The "+name+" function is being throttled", fn.MetricThrottles(sum), float64(cfg.Alarms.FunctionThrottles))
	}
}

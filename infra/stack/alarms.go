package stack

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/movietrace/tracinglocks/functions/emf"
)

// WorkerStopMarginSeconds is the worker's stop margin in a Lambda of
// WorkerTimeoutSeconds (worker.DefaultStopMargin): a long trace's segment
// stops taking frames this long before its deadline and hands off, so a
// healthy segment runs to about WorkerTimeoutSeconds - WorkerStopMarginSeconds.
const WorkerStopMarginSeconds = 10

// WorkerDurationAlarmSeconds: the worker duration alarm fires when an
// invocation runs past half its stop margin, i.e. a segment overran the
// point where it should have handed off (a frame, a write or the hand-off
// itself took more than 5 s) and came within 5 s of being killed. Segmented
// traces, which by design run to the stop margin, stay below it.
const WorkerDurationAlarmSeconds = WorkerTimeoutSeconds - WorkerStopMarginSeconds/2

// notify makes every alarm topic an action of a (alarm and OK).
func (s *Stack) notify(a awscloudwatch.Alarm) {
	for _, action := range s.alarmActions {
		a.AddAlarmAction(action)
		a.AddOkAction(action)
	}
}

// alarms creates the alarm topic (every environment; its email
// subscription from alarms.email) and the alarms, each with the topic as
// its action: the queues' depth (trace DLQ, upload DLQ, stream failures) and age,
// two worker business metrics (abandoned segments, expired leases), the stream processor's iterator
// age, every function's errors and throttles, the worker's duration near
// its timeout, the HTTP API's 5xx and latency, and the tables' throttles.
// docs/operations.md has one entry per alarm.
func (s *Stack) alarms(cfg Config, streamFn awslambda.Function) {
	s.AlarmTopic = awssns.NewTopic(s.Stack, jsii.String("AlarmTopic"), &awssns.TopicProps{
		DisplayName: jsii.String("Movie tracing alarms (" + s.envName + ")"),
		EnforceSSL:  jsii.Bool(true),
	})
	// A topic policy replaces SNS's default one: without this Allow only the
	// EnforceSSL Deny would remain and CloudWatch could not publish. Only
	// alarms of this account and region may.
	s.AlarmTopic.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("CloudWatchAlarmsPublish"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)},
		Actions:    jsii.Strings("sns:Publish"),
		Resources:  &[]*string{s.AlarmTopic.TopicArn()},
		Conditions: &map[string]interface{}{
			"ArnLike":      map[string]interface{}{"aws:SourceArn": "arn:" + *awscdk.Aws_PARTITION() + ":cloudwatch:" + *awscdk.Aws_REGION() + ":" + *awscdk.Aws_ACCOUNT_ID() + ":alarm:*"},
			"StringEquals": map[string]interface{}{"aws:SourceAccount": *awscdk.Aws_ACCOUNT_ID()},
		},
	}))
	cdknag.NagSuppressions_AddResourceSuppressions(s.AlarmTopic, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-SNS2"),
		Reason: jsii.String("CloudWatch alarms cannot publish to a topic encrypted with the AWS managed SNS key, and a customer managed key costs " +
			"more than everything else at rest; the notifications carry alarm names and states, no data."),
	}}, jsii.Bool(false))
	if cfg.Alarms.Email != "" {
		s.AlarmTopic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(cfg.Alarms.Email), nil))
	}
	s.alarmActions = []awscloudwatch.IAlarmAction{awscloudwatchactions.NewSnsAction(s.AlarmTopic)}
	if cfg.Alarms.TopicArn != "" {
		s.alarmActions = append(s.alarmActions, awscloudwatchactions.NewSnsAction(
			awssns.Topic_FromTopicArn(s.Stack, jsii.String("ExternalAlarmTopic"), jsii.String(cfg.Alarms.TopicArn))))
	}
	awscdk.NewCfnOutput(s.Stack, jsii.String("AlarmTopicArn"), &awscdk.CfnOutputProps{Value: s.AlarmTopic.TopicArn(), Description: jsii.String("Every alarm notifies this topic")})

	period := awscdk.Duration_Minutes(jsii.Number(float64(cfg.Alarms.PeriodMinutes)))
	alarm := func(id, description string, metric awscloudwatch.IMetric, threshold float64) {
		a := awscloudwatch.NewAlarm(s.Stack, jsii.String(id), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String(description + " (docs/operations.md#" + id + ")"),
			Metric:             metric,
			Threshold:          jsii.Number(threshold),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		s.notify(a)
	}
	maximum := &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Maximum")}
	sum := &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}
	alarm("TraceDlqDepthAlarm", "Trace jobs reached the DLQ: their movies stay tracing until the lease goes stale",
		s.TraceDLQ.MetricApproximateNumberOfMessagesVisible(maximum), float64(cfg.Alarms.DLQDepth))
	alarm("StreamFailureDepthAlarm", "The stream processor gave up on movie-row changes: jobs may not be enqueued, audit events may be missing",
		s.StreamFailures.MetricApproximateNumberOfMessagesVisible(maximum), float64(cfg.Alarms.DLQDepth))
	alarm("UploadDlqDepthAlarm", "Movie upload notifications reached the upload DLQ: those movies stay awaiting upload until the sweeper expires them",
		s.UploadDLQ.MetricApproximateNumberOfMessagesVisible(maximum), float64(cfg.Alarms.DLQDepth))
	alarm("StreamIteratorAgeAlarm", "The stream processor is falling behind the movies stream",
		streamFn.Metric(jsii.String("IteratorAge"), maximum), float64(cfg.Alarms.IteratorAgeSeconds*1000))
	for _, name := range Functions {
		fn := s.Functions[name]
		id := constructID(name)
		alarm(id+"ErrorsAlarm", "The "+name+" function is failing invocations", fn.MetricErrors(sum), float64(cfg.Alarms.FunctionErrors))
		alarm(id+"ThrottlesAlarm", "The "+name+" function is being throttled", fn.MetricThrottles(sum), float64(cfg.Alarms.FunctionThrottles))
	}
	alarm("TraceQueueAgeAlarm", "The oldest trace job has waited too long: workers are not keeping up or not running",
		s.TraceQueue.MetricApproximateAgeOfOldestMessage(maximum), float64(cfg.Alarms.QueueAgeSeconds))
	alarm("WorkerDurationAlarm", "A worker invocation ran past its stop margin, within seconds of its timeout: its segment overran the hand-off",
		s.Functions[Worker].MetricDuration(maximum), WorkerDurationAlarmSeconds*1000)
	alarm("Api5xxAlarm", "The HTTP API answered with server errors",
		s.API.MetricServerError(sum), float64(cfg.Alarms.API5xx))
	alarm("ApiLatencyAlarm", "The HTTP API's p99 latency is high",
		s.API.MetricLatency(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("p99")}), float64(cfg.Alarms.APILatencyMs))
	// Business metrics (EMF) that no other alarm covers: a claimed segment
	// that could not publish its end does not fail the invocation.
	alarm("WorkerAbandonedAlarm", "A claimed trace segment ended without publishing its outcome: its movie shows the trace as stalled until the lease goes stale",
		businessMetric(period, emf.WorkerSegments, map[string]string{emf.DimensionOutcome: "abandoned"}, "Sum"), 1)
	alarm("WorkerLeaseExpiredAlarm", "A worker's lease renewals did not get through for a whole lease: the worker stopped and the trace stalled",
		businessMetric(period, emf.LeaseConflicts, map[string]string{emf.DimensionFunction: string(emf.Worker), emf.DimensionReason: "expired"}, "Sum"), 1)
	for _, t := range []struct {
		id    string
		table awsdynamodb.Table
	}{{"MoviesTable", s.Movies}, {"FramesTable", s.Frames}, {"AuditTable", s.Audit}} {
		alarm(t.id+"ThrottlesAlarm", "DynamoDB throttled requests on the "+t.id, tableThrottles(t.table, strings.ToLower(strings.TrimSuffix(t.id, "Table")), period), float64(cfg.Alarms.TableThrottles))
	}
}

// tableThrottles is a table's read plus write throttle events.
// key makes the expression's metric IDs unique in a graph of several.
func tableThrottles(t awsdynamodb.Table, key string, period awscdk.Duration) awscloudwatch.IMetric {
	sum := &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String("FILL(r" + key + ", 0) + FILL(w" + key + ", 0)"),
		UsingMetrics: &map[string]awscloudwatch.IMetric{
			"r" + key: t.Metric(jsii.String("ReadThrottleEvents"), sum),
			"w" + key: t.Metric(jsii.String("WriteThrottleEvents"), sum),
		},
		Label:  jsii.String(key + " throttled requests"),
		Period: period,
	})
}

// businessMetric is one series of emf.Catalog; it panics (synthesis fails)
// for a series no function writes, so an alarm can never watch nothing.
func businessMetric(period awscdk.Duration, name string, dims map[string]string, stat string) awscloudwatch.IMetric {
	if _, ok := emf.Declared(name, dims); !ok {
		panic("alarm on " + emf.KeyOf(name, dims) + ", which is not in emf.Catalog")
	}
	d := map[string]*string{}
	for k, v := range dims {
		d[k] = jsii.String(v)
	}
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace: jsii.String(emf.Namespace), MetricName: jsii.String(name), DimensionsMap: &d,
		Period: period, Statistic: jsii.String(stat),
	})
}

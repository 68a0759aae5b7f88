package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/movietrace/tracinglocks/events/emf"
)

// addDashboard is one CloudWatch dashboard for the environment: the
// business metrics the functions write as EMF (package emf), then the API,
// the queues, the functions and the tables.
func (s *Stack) addDashboard() {
	period := awscdk.Duration_Minutes(jsii.Number(float64(s.cfg.Alarms.PeriodMinutes)))
	sum := &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}
	maximum := &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Maximum")}
	business := func(name, stat string) awscloudwatch.IMetric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String(emf.Namespace), MetricName: jsii.String(name), Period: period, Statistic: jsii.String(stat),
		})
	}
	graph := func(title string, left ...awscloudwatch.IMetric) awscloudwatch.IWidget {
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
			Title: jsii.String(title), Left: &left, Width: jsii.Number(8), Height: jsii.Number(6),
		})
	}
	refusals := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String(`SEARCH('{` + emf.Namespace + `,` + emf.DimensionReason + `} MetricName="` + emf.ClaimRefusals + `"', 'Sum', 300)`),
		Label:      jsii.String("claim refusals by reason"),
		Period:     period,
	})
	var errs, durations []awscloudwatch.IMetric
	for _, name := range Functions {
		errs = append(errs, s.Functions[name].MetricErrors(sum))
		durations = append(durations, s.Functions[name].MetricDuration(maximum))
	}
	throttles := []awscloudwatch.IMetric{
		tableThrottles(s.Movies, "movies", period), tableThrottles(s.Frames, "frames", period), tableThrottles(s.Audit, "audit", period),
	}
	s.Dashboard = awscloudwatch.NewDashboard(s.Stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DefaultInterval: awscdk.Duration_Hours(jsii.Number(3)),
		Widgets: &[]*[]awscloudwatch.IWidget{
			{
				graph("Traces", business(emf.TracesStarted, "Sum"), business(emf.TracesCompleted, "Sum"),
					business(emf.TracesFailed, "Sum"), business(emf.TracesAbandoned, "Sum")),
				graph("Claims and leases", refusals, business(emf.LeaseConflicts, "Sum"), business(emf.PoisonRecords, "Sum")),
				graph("Frames traced per second", business(emf.FramesPerSecond, "Average"), business(emf.FramesPerSecond, "Minimum")),
			},
			{
				graph("API requests and errors", s.API.MetricCount(sum), s.API.MetricClientError(sum), s.API.MetricServerError(sum)),
				graph("API latency (p50, p99)", s.API.MetricLatency(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("p50")}),
					s.API.MetricLatency(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("p99")})),
				graph("Trace queue", s.TraceQueue.MetricApproximateNumberOfMessagesVisible(maximum),
					s.TraceQueue.MetricApproximateAgeOfOldestMessage(maximum), s.TraceDLQ.MetricApproximateNumberOfMessagesVisible(maximum)),
			},
			{
				graph("Function errors", errs...),
				graph("Function duration (max)", durations...),
				graph("DynamoDB throttles", throttles...),
			},
		},
	})
	awscdk.NewCfnOutput(s.Stack, jsii.String("DashboardName"), &awscdk.CfnOutputProps{Value: s.Dashboard.DashboardName(), Description: jsii.String("CloudWatch dashboard")})
}

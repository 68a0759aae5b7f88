package stack

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/movietrace/tracinglocks/functions/emf"
)

// addDashboard is one CloudWatch dashboard for the environment: the
// business metrics the functions write as EMF (every series of emf.Catalog,
// each by its exact dimensions, so no panel names a series that no code
// writes: TestDashboardShowsOnlyEmittedSeries), then the API, the queues,
// the functions and the tables.
func (s *Stack) addDashboard() {
	period := awscdk.Duration_Minutes(jsii.Number(float64(s.cfg.Alarms.PeriodMinutes)))
	sum := &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}
	maximum := &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Maximum")}
	graph := func(title string, left ...awscloudwatch.IMetric) awscloudwatch.IWidget {
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
			Title: jsii.String(title), Left: &left, Width: jsii.Number(8), Height: jsii.Number(6),
		})
	}
	business := func(title string, names ...string) awscloudwatch.IWidget {
		return graph(title, BusinessMetrics(period, names...)...)
	}
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
				business("Trace outcomes (movie rows)", emf.TracesStarted, emf.TracesCompleted, emf.TracesFailed,
					emf.TracesCancelled, emf.TracesAbandoned),
				business("Worker segments by outcome", emf.WorkerSegments, emf.ContinuationSegments),
				business("Claim refusals by reason", emf.ClaimRefusals),
			},
			{
				business("Lease conflicts and poison records", emf.LeaseConflicts, emf.PoisonRecords),
				business("Frames traced", emf.FramesTraced),
				business("Frames traced per second (per segment)", emf.FramesPerSecond),
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

// BusinessMetrics are the catalogue's series of the given metric names
// (emf.Catalog), each with its exact dimensions: counts as sums, rates as
// averages and minimums.
func BusinessMetrics(period awscdk.Duration, names ...string) []awscloudwatch.IMetric {
	var out []awscloudwatch.IMetric
	for _, name := range names {
		for _, s := range emf.Catalog() {
			if s.Name != name {
				continue
			}
			stats := []string{"Sum"}
			if s.Unit == emf.CountPerSecond {
				stats = []string{"Average", "Minimum"}
			}
			label := s.Name
			for _, d := range s.Dimensions {
				label += " " + d.Value
			}
			for _, stat := range stats {
				props := &awscloudwatch.MetricProps{
					Namespace: jsii.String(emf.Namespace), MetricName: jsii.String(s.Name), Period: period,
					Statistic: jsii.String(stat), Label: jsii.String(label),
				}
				if len(stats) > 1 {
					props.Label = jsii.String(label + " (" + strings.ToLower(stat) + ")")
				}
				if m := s.DimensionsMap(); m != nil {
					dims := map[string]*string{}
					for k, v := range m {
						dims[k] = jsii.String(v)
					}
					props.DimensionsMap = &dims
				}
				out = append(out, awscloudwatch.NewMetric(props))
			}
		}
	}
	return out
}

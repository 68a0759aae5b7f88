package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/jsii-runtime-go"

	"github.com/movietrace/tracinglocks/functions/envvar"
)

// Sweeper is the scheduled function that finalises stale tracing leases
// nobody took over (functions/sweeper).
const Sweeper = "sweeper"

// Sweeper settings: a sweep every SweepEveryMinutes, so a stale trace reads
// tracing_failed on the stored row (and in the audit table) at most that
// long after its lease expired.
const (
	SweeperTimeoutSeconds = 60
	SweepEveryMinutes     = 5
)

// addSweeper creates the sweeper function, its schedule and its grants, and
// lets the worker send the continuation of a trace that outlasts one
// invocation (docs/worker.md, "Segments").
func (s *Stack) addSweeper() {
	role := s.function(Sweeper, "Finalise stale tracing leases nobody took over", SweeperTimeoutSeconds, 256,
		map[string]*string{envvar.MoviesTable: s.Movies.TableName(), envvar.FramesTable: s.Frames.TableName()})
	allow(role, "MoviesSweep", []*string{s.Movies.TableArn()}, "dynamodb:Scan", "dynamodb:UpdateItem", "dynamodb:DeleteItem")
	// It finishes deletions (purge.Finisher): a deleting movie's frames go.
	allow(role, "PurgeFrames", []*string{s.Frames.TableArn()}, "dynamodb:Query", "dynamodb:BatchWriteItem")
	rule := awsevents.NewRule(s.Stack, jsii.String("SweeperSchedule"), &awsevents.RuleProps{
		Description: jsii.String("Run the sweeper: finalise stale tracing leases"),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(SweepEveryMinutes))),
	})
	// A missed sweep is made up by the next one: no retries.
	rule.AddTarget(awseventstargets.NewLambdaFunction(s.Functions[Sweeper], &awseventstargets.LambdaFunctionProps{
		RetryAttempts: jsii.Number(0),
	}))

	allow(s.Roles[Worker], "ContinueTraceJobs", []*string{s.TraceQueue.QueueArn()}, "sqs:SendMessage")
}

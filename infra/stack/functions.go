package stack

import (
	"path/filepath"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/schema"
)

// MovieMaxBytes is MOVIE_MAX_BYTES, the largest movie file POST /movies
// accepts: 16 GiB (an hour of 1080p30 at 8 Mbit/s is 3.64 GB; at 35
// Mbit/s, 16 GB). What bounds it:
//   - the upload: the page sends parts of MOVIE_PART_BYTES (16 MiB default,
//     S3 takes 10,000: up to 156 GiB); a client that does not ask for parts
//     is refused at create above 5 GiB, S3's largest single PUT
//     (httpapi.MaxPutBytes);
//   - the ingest's /tmp does not: it streams the upload over ranged GETs and
//     holds at most 16 chunks (128 MiB of a remux) at once (package media);
//   - the 900 s of one invocation does: the first range reads the whole
//     upload once more before it prepares a frame (the decision's one
//     ffprobe: 1.05x the upload, make sim-hour on 2026-12-08; 3.04x before,
//     three reads) and must finish a chunk by its hard deadline (a minute
//     before the timeout). At an assumed 75 MB/s from S3 (not measured),
//     16 GiB is 17.2 GB x 1.05 / 75 MB/s = 241 s of reading (the tool
//     printed 277 s for the preamble), ~560 s to spare; 32 GiB would fit
//     that arithmetic too but is not allowed until the read rate is
//     measured in AWS. Later ranges read only the decision.
const MovieMaxBytes = 16 << 30

// addFunctions creates the api, streamprocessor and worker functions, each
// with its own log group and role, and grants each role only what that
// function uses.
func (s *Stack) addFunctions() {
	apiRole := s.function(API, "HTTP API: leases, edits, trace requests, movie metadata",
		APITimeoutSeconds, APIMemoryMB, map[string]*string{
			envvar.MoviesTable: s.Movies.TableName(),
			envvar.FramesTable: s.Frames.TableName(),
			envvar.AuditTable:  s.Audit.TableName(),
			// The largest movie file (MovieMaxBytes).
			envvar.MaxUploadBytes: jsii.String(strconv.FormatInt(MovieMaxBytes, 10)),
		})
	if s.cfg.CORSOrigin != "" {
		s.Functions[API].AddEnvironment(jsii.String(envvar.CORSOrigin), jsii.String(s.cfg.CORSOrigin), nil)
	}
	// PutItem: POST /movies creates the row (a conditional put). DELETE
	// /movies/{id} is an UpdateItem (the movie becomes deleting); the
	// sweeper removes its frames, objects and row (purge).
	allow(apiRole, "MoviesReadWrite", []*string{s.Movies.TableArn()},
		"dynamodb:GetItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:UpdateItem", "dynamodb:PutItem")
	allow(apiRole, "FramesRead", []*string{s.Frames.TableArn()}, "dynamodb:Query")
	// The API reads the audit table only through its history index.
	allow(apiRole, "AuditHistoryRead", []*string{jsii.String(*s.Audit.TableArn() + "/index/" + schema.HistoryIndex)}, "dynamodb:Query")

	streamRole := s.function(StreamProcessor, "Movies stream: enqueue trace jobs, project audit events",
		StreamProcessorTimeoutSeconds, 256, map[string]*string{
			envvar.AuditTable:    s.Audit.TableName(),
			envvar.TraceQueueURL: s.TraceQueue.QueueUrl(),
		})
	allow(streamRole, "EnqueueTraceJobs", []*string{s.TraceQueue.QueueArn()}, "sqs:SendMessage")
	// The audit projection writes conditional Puts in TransactWriteItems,
	// which IAM authorizes as one dynamodb:PutItem per item (docs/stream.md).
	allow(streamRole, "AuditWrite", []*string{s.Audit.TableArn()}, "dynamodb:PutItem")

	workerRole := s.function(Worker, "Trace jobs: claim, write frames, publish the terminal state",
		WorkerTimeoutSeconds, 512, map[string]*string{
			envvar.MoviesTable:   s.Movies.TableName(),
			envvar.FramesTable:   s.Frames.TableName(),
			envvar.TraceQueueURL: s.TraceQueue.QueueUrl(),
		})
	// Frame writes are TransactWriteItems, which IAM authorizes item by
	// item: a ConditionCheck of the job fence on the movie row
	// (ConditionCheckItem), then Puts and Deletes of frames.
	allow(workerRole, "MoviesJobFence", []*string{s.Movies.TableArn()},
		"dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem")
	allow(workerRole, "FramesReadWrite", []*string{s.Frames.TableArn()},
		"dynamodb:Query", "dynamodb:PutItem", "dynamodb:DeleteItem")
}

// function creates one arm64 function from <AssetRoot>/<name>/bootstrap with
// its own log group and its own role (which may only write to that log
// group), records both in s.Functions and s.Roles, and returns the role.
func (s *Stack) function(name, description string, timeoutSeconds, memoryMB float64, env map[string]*string) awsiam.Role {
	id := constructID(name)
	logs := awslogs.NewLogGroup(s.Stack, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
		Retention: s.retention, RemovalPolicy: s.removal,
	})
	// An own role rather than the managed AWSLambdaBasicExecutionRole:
	// it may only write to its own log group.
	role := awsiam.NewRole(s.Stack, jsii.String(id+"Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("Execution role of the " + name + " function"),
	})
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("WriteOwnLogs"),
		Actions:   jsii.Strings("logs:CreateLogStream", "logs:PutLogEvents"),
		Resources: jsii.Strings(*logs.LogGroupArn()),
	}))
	env[envvar.LeaseSeconds] = jsii.String(strconv.Itoa(LeaseSeconds))
	env[envvar.LogLevel] = jsii.String(s.cfg.LogLevel)
	fn := awslambda.NewFunction(s.Stack, jsii.String(id+"Function"), &awslambda.FunctionProps{
		Description:   jsii.String(description),
		Runtime:       awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:  awslambda.Architecture_ARM_64(),
		Handler:       jsii.String("bootstrap"),
		Code:          awslambda.Code_FromAsset(jsii.String(filepath.Join(s.assetRoot, name)), nil),
		Timeout:       awscdk.Duration_Seconds(jsii.Number(timeoutSeconds)),
		MemorySize:    jsii.Number(memoryMB),
		Role:          role,
		LogGroup:      logs,
		LoggingFormat: awslambda.LoggingFormat_JSON,
		// X-Ray: each invocation is a trace (the HTTP API itself cannot be
		// traced by X-Ray; REST APIs only).
		Tracing:     awslambda.Tracing_ACTIVE,
		Environment: &env,
	})
	cdknag.NagSuppressions_AddResourceSuppressions(role, &[]*cdknag.NagPackSuppression{{
		Id:        jsii.String("AwsSolutions-IAM5"),
		Reason:    jsii.String("Active X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords have no resource-level permissions."),
		AppliesTo: &[]interface{}{jsii.String("Resource::*")},
	}}, jsii.Bool(true))
	s.Functions[name] = fn
	s.Roles[name] = role
	return role
}

// allow adds one statement (sid) allowing actions on resources to role.
func allow(role awsiam.Role, sid string, resources []*string, actions ...string) {
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String(sid), Actions: jsii.Strings(actions...), Resources: &resources,
	}))
}

// addEventSources wires the movies stream to the stream processor (filtered,
// with partial batch responses and the on-failure queue) and the trace-job
// queue to the worker.
func (s *Stack) addEventSources() {
	streamFn := s.Functions[StreamProcessor]
	streamFn.AddEventSource(awslambdaeventsources.NewDynamoEventSource(s.Movies, &awslambdaeventsources.DynamoEventSourceProps{
		StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
		BatchSize:               jsii.Number(StreamBatchSize),
		MaxBatchingWindow:       awscdk.Duration_Seconds(jsii.Number(1)),
		ParallelizationFactor:   jsii.Number(1),
		ReportBatchItemFailures: jsii.Bool(true),
		BisectBatchOnError:      jsii.Bool(true),
		RetryAttempts:           jsii.Number(StreamRetryAttempts),
		MaxRecordAge:            awscdk.Duration_Hours(jsii.Number(StreamMaxRecordAgeHours)),
		OnFailure:               awslambdaeventsources.NewSqsDlq(s.StreamFailures),
		Filters:                 StreamFilters(),
	}))
	cdknag.NagSuppressions_AddResourceSuppressions(s.Roles[StreamProcessor], &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-IAM5"),
		Reason: jsii.String("dynamodb:ListStreams, which the stream event source needs, has no resource-level permissions; " +
			"the stream reads themselves (DescribeStream, GetRecords, GetShardIterator) are scoped to the movies stream ARN."),
		AppliesTo: &[]interface{}{jsii.String("Resource::*")},
	}}, jsii.Bool(true))

	s.Functions[Worker].AddEventSource(awslambdaeventsources.NewSqsEventSource(s.TraceQueue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(WorkerBatchSize),
		ReportBatchItemFailures: jsii.Bool(true),
		MaxConcurrency:          jsii.Number(float64(s.cfg.WorkerMaxConcurrency)),
	}))
}

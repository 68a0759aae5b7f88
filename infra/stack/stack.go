// Package stack defines the movie tracing locks stack: three DynamoDB tables
// (movies with a stream, frames, audit), the trace-job queue and its DLQ,
// three arm64 Lambda functions (api, streamprocessor, worker) wired to an
// HTTP API, the movies stream and the queue, and the alarms that watch them.
//
// Each function gets its own role with only the actions it uses on only the
// resources it uses; ../../docs/deploy.md has the table.
//
// NewStack only sequences the parts; each part has its own constructor in
// its own file: tables.go, queues.go, functions.go (functions, grants, event
// sources), api.go (HTTP API, authorizer, stage), cognito.go, alarms.go,
// outputs.go. filters.go holds the stream event filters and assembly.go the
// cdk-nag aspect and the cloud-assembly annotation reader.
package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfront"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Function names: the directories under ./functions, under the asset root
// (build/<name>/bootstrap) and the construct IDs.
const (
	API             = "api"
	StreamProcessor = "streamprocessor"
	Worker          = "worker"
)

// Functions lists every function the stack deploys.
var Functions = []string{API, StreamProcessor, Worker, Ingest, Sweeper}

// Timeouts and sizes. The queue's visibility timeout is derived from the
// worker's so that a message is never visible again while an invocation may
// still be working on it (AWS asks for at least 6x the function timeout when
// an SQS event source retries throttled invocations).
const (
	APITimeoutSeconds = 10
	// APIMemoryMB: the API decodes frame images with ffmpeg
	// (functions/internal/media) and Lambda gives CPU in proportion to
	// memory, one vCPU at 1,769 MB. A jump to a cold 1080p frame costs
	// ~0.3 CPU-s of one ffmpeg thread (docs/media.md, "Viewer latency":
	// a jump in AWS): ~0.3 s at 1,769 MB, ~2 s at 256 MB (1/7 of a
	// vCPU). More would not make one decode faster (one thread), and an
	// ffmpeg holds ~76 MB at 1080p (two waiting, media.maxWaitingRuns,
	// and the one decoding).
	APIMemoryMB                   = 1769
	StreamProcessorTimeoutSeconds = 60
	WorkerTimeoutSeconds          = 5 * 60
	QueueVisibilityFactor         = 6
	// DLQMaxReceiveCount is how many receives a trace job gets before it
	// moves to the DLQ. A redelivered job is a no-op for the worker (it was
	// claimed once), so retries are cheap.
	DLQMaxReceiveCount = 5
	// LeaseSeconds is LEASE_SECONDS: the 15-minute lease of the design.
	LeaseSeconds = 900

	// Stream event source settings.
	// StreamBatchSize: under load, up to 1,000 filtered records share one
	// invocation, so trace jobs go out 10 per SendMessageBatch and audit
	// items 100 per TransactWriteItems (docs/stream.md: about 0.1 requests
	// per start needs batches of that size); the 1 s batching window bounds
	// the latency a trace start waits for its job when traffic is light.
	StreamBatchSize         = 1000
	StreamRetryAttempts     = 10
	StreamMaxRecordAgeHours = 6
	// Worker event source settings: one job per invocation.
	WorkerBatchSize = 1
)

// Props configures NewStack.
type Props struct {
	awscdk.StackProps
	// EnvName is the environment's name (dev, staging, prod); it is tagged
	// on every resource.
	EnvName string
	// Config is the environment's validated settings.
	Config Config
	// AssetRoot is the directory holding <function>/bootstrap for each
	// function (normally <repo>/build, which `make build` fills). Tests point
	// it at a directory of placeholder files.
	AssetRoot string
}

// Stack is the synthesized stack and the constructs tests look at.
type Stack struct {
	awscdk.Stack
	Movies, Frames, Audit awsdynamodb.Table
	TraceQueue, TraceDLQ  awssqs.Queue
	StreamFailures        awssqs.Queue
	// StreamPoison holds undecodable stream records set aside (poison.go).
	StreamPoison awssqs.Queue
	Functions    map[string]awslambda.Function
	Roles        map[string]awsiam.Role
	API          awsapigatewayv2.HttpApi
	Stage        awsapigatewayv2.HttpStage
	// Movie storage (movies.go).
	MoviesBucket, MovieAccessLogs awss3.Bucket
	UploadQueue, UploadDLQ        awssqs.Queue
	FFmpegLayer                   awslambda.LayerVersion
	// UserPool, its domain and client are nil when Config.JWT names an
	// external issuer.
	UserPool       awscognito.UserPool
	UserPoolDomain awscognito.UserPoolDomain
	UserPoolClient awscognito.UserPoolClient
	// The page (web.go): its bucket, the distribution in front of page and
	// API, and the response headers policy.
	SiteBucket    awss3.Bucket
	Distribution  awscloudfront.Distribution
	HeadersPolicy awscloudfront.ResponseHeadersPolicy
	// Operations (ops.go): the alarm topic and the dashboard.
	AlarmTopic awssns.Topic
	Dashboard  awscloudwatch.Dashboard

	// Settings the part constructors share, fixed by NewStack.
	cfg       Config
	envName   string
	assetRoot string
	removal   awscdk.RemovalPolicy
	retention awslogs.RetentionDays
	// alarmActions are the alarms' SNS actions: the stack's alarm topic and
	// Config.Alarms.TopicArn's (set by alarms; see notify).
	alarmActions []awscloudwatch.IAlarmAction
}

// NewStack defines the whole system in scope.
// NewStack defines the whole system in scope.
func NewStack(scope constructs.Construct, id string, props *Props) *Stack {
	cfg := props.Config
	sp := props.StackProps
	if sp.Description == nil {
		sp.Description = jsii.String("Movie tracing locks (" + props.EnvName + "): event-sourced trace workflow on DynamoDB Streams, SQS and Lambda")
	}
	removal := awscdk.RemovalPolicy_DESTROY
	if cfg.Retain() {
		removal = awscdk.RemovalPolicy_RETAIN
		// Production guard: the stack cannot be deleted by accident.
		if sp.TerminationProtection == nil {
			sp.TerminationProtection = jsii.Bool(true)
		}
	}
	s := &Stack{
		Stack:     awscdk.NewStack(scope, &id, &sp),
		Functions: map[string]awslambda.Function{},
		Roles:     map[string]awsiam.Role{},
		cfg:       cfg,
		envName:   props.EnvName,
		assetRoot: props.AssetRoot,
		removal:   removal,
		retention: retentionEnum(cfg.LogRetentionDays),
	}
	awscdk.Tags_Of(s.Stack).Add(jsii.String("project"), jsii.String("movietrace-tracinglocks"), nil)
	awscdk.Tags_Of(s.Stack).Add(jsii.String("environment"), jsii.String(props.EnvName), nil)

	s.addTables()
	s.addQueues()
	s.addFunctions()
	s.addEventSources()
	s.addSweeper()
	s.addMovieStorage()
	s.addHTTPAPI()
	s.addWeb()
	s.alarms(cfg, s.Functions[StreamProcessor])
	s.addStreamPoison()
	s.addDashboard()
	s.addOutputs()
	return s
}

func constructID(name string) string {
	switch name {
	case API:
		return "Api"
	case StreamProcessor:
		return "StreamProcessor"
	case Worker:
		return "Worker"
	case Ingest:
		return "Ingest"
	case Sweeper:
		return "Sweeper"
	}
	return name
}

func retentionEnum(days int) awslogs.RetentionDays {
	m := map[int]awslogs.RetentionDays{
		1: awslogs.RetentionDays_ONE_DAY, 3: awslogs.RetentionDays_THREE_DAYS, 5: awslogs.RetentionDays_FIVE_DAYS,
		7: awslogs.RetentionDays_ONE_WEEK, 14: awslogs.RetentionDays_TWO_WEEKS, 30: awslogs.RetentionDays_ONE_MONTH,
		60: awslogs.RetentionDays_TWO_MONTHS, 90: awslogs.RetentionDays_THREE_MONTHS, 120: awslogs.RetentionDays_FOUR_MONTHS,
		150: awslogs.RetentionDays_FIVE_MONTHS, 180: awslogs.RetentionDays_SIX_MONTHS, 365: awslogs.RetentionDays_ONE_YEAR,
		400: awslogs.RetentionDays_THIRTEEN_MONTHS, 545: awslogs.RetentionDays_EIGHTEEN_MONTHS, 731: awslogs.RetentionDays_TWO_YEARS,
		1096: awslogs.RetentionDays_THREE_YEARS, 1827: awslogs.RetentionDays_FIVE_YEARS, 2192: awslogs.RetentionDays_SIX_YEARS,
		2557: awslogs.RetentionDays_SEVEN_YEARS, 2922: awslogs.RetentionDays_EIGHT_YEARS, 3288: awslogs.RetentionDays_NINE_YEARS,
		3653: awslogs.RetentionDays_TEN_YEARS,
	}
	return m[days]
}

// StackName is the stack (and construct) name of environment env.
func StackName(env string) string { return "TracingLocks-" + env }

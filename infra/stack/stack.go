// Package stack defines the movie tracing locks stack: three DynamoDB tables
// (movies with a stream, frames, audit), the trace-job queue and its DLQ,
// three arm64 Lambda functions (api, streamprocessor, worker) wired to an
// HTTP API, the movies stream and the queue, and the alarms that watch them.
//
// Each function gets its own role with only the actions it uses on only the
// resources it uses; ../../docs/deploy.md has the table.
package stack

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2authorizers"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// Function names: the directories under ./functions, under the asset root
// (build/<name>/bootstrap) and the construct IDs.
const (
	API             = "api"
	StreamProcessor = "streamprocessor"
	Worker          = "worker"
)

// Functions lists every function the stack deploys.
var Functions = []string{API, StreamProcessor, Worker}

// Timeouts and sizes. The queue's visibility timeout is derived from the
// worker's so that a message is never visible again while an invocation may
// still be working on it (AWS asks for at least 6x the function timeout when
// an SQS event source retries throttled invocations).
const (
	APITimeoutSeconds             = 10
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

// Environment variables the functions read (functions/internal/config).
const (
	EnvMoviesTable = "MOVIES_TABLE"
	EnvFramesTable = "FRAMES_TABLE"
	EnvAuditTable  = "AUDIT_TABLE"
	EnvQueueURL    = "TRACE_QUEUE_URL"
	EnvLeaseSecs   = "LEASE_SECONDS"
	EnvLogLevel    = "LOG_LEVEL"
	EnvCORSOrigin  = "CORS_ORIGIN"
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
	Functions             map[string]awslambda.Function
	Roles                 map[string]awsiam.Role
	API                   awsapigatewayv2.HttpApi
	Stage                 awsapigatewayv2.HttpStage
	// UserPool is nil when Config.JWT names an external issuer.
	UserPool awscognito.UserPool
}

// NewStack defines the whole system in scope.
func NewStack(scope constructs.Construct, id string, props *Props) *Stack {
	cfg := props.Config
	sp := props.StackProps
	if sp.Description == nil {
		sp.Description = jsii.String("Movie tracing locks (" + props.EnvName + "): event-sourced trace workflow on DynamoDB Streams, SQS and Lambda")
	}
	s := &Stack{Stack: awscdk.NewStack(scope, &id, &sp), Functions: map[string]awslambda.Function{}, Roles: map[string]awsiam.Role{}}
	awscdk.Tags_Of(s.Stack).Add(jsii.String("project"), jsii.String("movietrace-tracinglocks"), nil)
	awscdk.Tags_Of(s.Stack).Add(jsii.String("environment"), jsii.String(props.EnvName), nil)

	removal := awscdk.RemovalPolicy_DESTROY
	if cfg.Retain() {
		removal = awscdk.RemovalPolicy_RETAIN
	}

	// --- Tables ---------------------------------------------------------
	table := func(id string, sortKey *awsdynamodb.Attribute, stream bool) awsdynamodb.Table {
		p := &awsdynamodb.TableProps{
			PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("movieId"), Type: awsdynamodb.AttributeType_STRING},
			BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
			Encryption:   awsdynamodb.TableEncryption_AWS_MANAGED,
			PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
				PointInTimeRecoveryEnabled: jsii.Bool(true),
			},
			DeletionProtection: jsii.Bool(cfg.Retain()),
			RemovalPolicy:      removal,
			SortKey:            sortKey,
		}
		if stream {
			p.Stream = awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES
		}
		return awsdynamodb.NewTable(s.Stack, jsii.String(id), p)
	}
	// No TTL anywhere: TTL deletes whole items, and a movie must stay.
	s.Movies = table("MoviesTable", nil, true)
	s.Frames = table("FramesTable", &awsdynamodb.Attribute{Name: jsii.String("frame"), Type: awsdynamodb.AttributeType_NUMBER}, false)
	s.Audit = table("AuditTable", &awsdynamodb.Attribute{Name: jsii.String("eventKey"), Type: awsdynamodb.AttributeType_STRING}, false)

	// --- Queues ---------------------------------------------------------
	queue := func(id string, p *awssqs.QueueProps) awssqs.Queue {
		p.Encryption = awssqs.QueueEncryption_SQS_MANAGED
		p.EnforceSSL = jsii.Bool(true)
		return awssqs.NewQueue(s.Stack, jsii.String(id), p)
	}
	s.TraceDLQ = queue("TraceJobDLQ", &awssqs.QueueProps{RetentionPeriod: awscdk.Duration_Days(jsii.Number(14))})
	s.TraceQueue = queue("TraceJobQueue", &awssqs.QueueProps{
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(QueueVisibilityFactor * WorkerTimeoutSeconds)),
		RetentionPeriod:   awscdk.Duration_Days(jsii.Number(4)),
		DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: s.TraceDLQ, MaxReceiveCount: jsii.Number(DLQMaxReceiveCount)},
	})
	// Where the stream event source puts a description of the records it
	// gave up on (retries or record age exhausted): shard, sequence numbers,
	// not the records. Read it with the replay tool within the stream's 24 h.
	s.StreamFailures = queue("StreamFailureQueue", &awssqs.QueueProps{RetentionPeriod: awscdk.Duration_Days(jsii.Number(14))})
	cdknag.NagSuppressions_AddResourceSuppressions(s.StreamFailures, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-SQS3"),
		Reason: jsii.String("This queue is itself a failure destination (the stream event source's on-failure target); " +
			"nothing consumes it automatically, so a dead-letter queue behind it would never receive a message. Its depth is alarmed."),
	}}, jsii.Bool(false))

	// --- Functions ------------------------------------------------------
	retention := retentionEnum(cfg.LogRetentionDays)
	common := map[string]*string{
		EnvLeaseSecs: jsii.String(strconv.Itoa(LeaseSeconds)),
		EnvLogLevel:  jsii.String(cfg.LogLevel),
	}
	function := func(name, description string, timeoutSeconds, memoryMB float64, env map[string]*string) (awslambda.Function, awsiam.Role) {
		id := constructID(name)
		logs := awslogs.NewLogGroup(s.Stack, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
			Retention: retention, RemovalPolicy: removal,
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
		for k, v := range common {
			env[k] = v
		}
		fn := awslambda.NewFunction(s.Stack, jsii.String(id+"Function"), &awslambda.FunctionProps{
			Description:   jsii.String(description),
			Runtime:       awslambda.Runtime_PROVIDED_AL2023(),
			Architecture:  awslambda.Architecture_ARM_64(),
			Handler:       jsii.String("bootstrap"),
			Code:          awslambda.Code_FromAsset(jsii.String(filepath.Join(props.AssetRoot, name)), nil),
			Timeout:       awscdk.Duration_Seconds(jsii.Number(timeoutSeconds)),
			MemorySize:    jsii.Number(memoryMB),
			Role:          role,
			LogGroup:      logs,
			LoggingFormat: awslambda.LoggingFormat_JSON,
			Environment:   &env,
		})
		s.Functions[name] = fn
		s.Roles[name] = role
		return fn, role
	}
	allow := func(role awsiam.Role, sid string, resources []*string, actions ...string) {
		role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid: jsii.String(sid), Actions: jsii.Strings(actions...), Resources: &resources,
		}))
	}

	apiFn, apiRole := function(API, "HTTP API: leases, edits, trace requests, movie metadata",
		APITimeoutSeconds, 256, map[string]*string{
			EnvMoviesTable: s.Movies.TableName(),
			EnvFramesTable: s.Frames.TableName(),
			EnvAuditTable:  s.Audit.TableName(),
			EnvCORSOrigin:  jsii.String(cfg.CORSOrigin),
		})
	allow(apiRole, "MoviesReadWrite", []*string{s.Movies.TableArn()},
		"dynamodb:GetItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:UpdateItem")
	allow(apiRole, "FramesRead", []*string{s.Frames.TableArn()}, "dynamodb:Query")
	allow(apiRole, "AuditRead", []*string{s.Audit.TableArn()}, "dynamodb:Query")

	streamFn, streamRole := function(StreamProcessor, "Movies stream: enqueue trace jobs, project audit events",
		StreamProcessorTimeoutSeconds, 256, map[string]*string{
			EnvAuditTable: s.Audit.TableName(),
			EnvQueueURL:   s.TraceQueue.QueueUrl(),
		})
	allow(streamRole, "EnqueueTraceJobs", []*string{s.TraceQueue.QueueArn()}, "sqs:SendMessage")
	// The audit projection writes conditional Puts in TransactWriteItems,
	// which IAM authorizes as one dynamodb:PutItem per item (docs/stream.md).
	allow(streamRole, "AuditWrite", []*string{s.Audit.TableArn()}, "dynamodb:PutItem")

	workerFn, workerRole := function(Worker, "Trace jobs: claim, write frames, publish the terminal state",
		WorkerTimeoutSeconds, 512, map[string]*string{
			EnvMoviesTable: s.Movies.TableName(),
			EnvFramesTable: s.Frames.TableName(),
			EnvQueueURL:    s.TraceQueue.QueueUrl(),
		})
	// Frame writes are TransactWriteItems, which IAM authorizes item by
	// item: a ConditionCheck of the job fence on the movie row
	// (ConditionCheckItem), then Puts and Deletes of frames.
	allow(workerRole, "MoviesJobFence", []*string{s.Movies.TableArn()},
		"dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem")
	allow(workerRole, "FramesReadWrite", []*string{s.Frames.TableArn()},
		"dynamodb:Query", "dynamodb:PutItem", "dynamodb:DeleteItem")

	// --- Event sources --------------------------------------------------
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
	cdknag.NagSuppressions_AddResourceSuppressions(streamRole, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-IAM5"),
		Reason: jsii.String("dynamodb:ListStreams, which the stream event source needs, has no resource-level permissions; " +
			"the stream reads themselves (DescribeStream, GetRecords, GetShardIterator) are scoped to the movies stream ARN."),
		AppliesTo: &[]interface{}{jsii.String("Resource::*")},
	}}, jsii.Bool(true))

	workerFn.AddEventSource(awslambdaeventsources.NewSqsEventSource(s.TraceQueue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(WorkerBatchSize),
		ReportBatchItemFailures: jsii.Bool(true),
		MaxConcurrency:          jsii.Number(float64(cfg.WorkerMaxConcurrency)),
	}))

	// --- HTTP API -------------------------------------------------------
	var authorizer awsapigatewayv2.IHttpRouteAuthorizer
	if cfg.JWT != nil {
		authorizer = awsapigatewayv2authorizers.NewHttpJwtAuthorizer(jsii.String("JwtAuthorizer"), jsii.String(cfg.JWT.Issuer),
			&awsapigatewayv2authorizers.HttpJwtAuthorizerProps{JwtAudience: jsii.Strings(cfg.JWT.Audience...)})
	} else {
		pool, client := s.userPool(cfg, removal)
		authorizer = awsapigatewayv2authorizers.NewHttpJwtAuthorizer(jsii.String("JwtAuthorizer"), pool.UserPoolProviderUrl(),
			&awsapigatewayv2authorizers.HttpJwtAuthorizerProps{JwtAudience: &[]*string{client.UserPoolClientId()}})
	}
	s.API = awsapigatewayv2.NewHttpApi(s.Stack, jsii.String("HttpApi"), &awsapigatewayv2.HttpApiProps{
		Description:        jsii.String("Movie tracing locks API (" + props.EnvName + ")"),
		CreateDefaultStage: jsii.Bool(false),
		// API Gateway answers preflight OPTIONS itself (no OPTIONS route
		// exists), without the authorizer.
		CorsPreflight: &awsapigatewayv2.CorsPreflightOptions{
			AllowOrigins: jsii.Strings(cfg.CORSOrigin),
			AllowMethods: &[]awsapigatewayv2.CorsHttpMethod{
				awsapigatewayv2.CorsHttpMethod_GET, awsapigatewayv2.CorsHttpMethod_POST, awsapigatewayv2.CorsHttpMethod_PUT,
				awsapigatewayv2.CorsHttpMethod_PATCH, awsapigatewayv2.CorsHttpMethod_DELETE, awsapigatewayv2.CorsHttpMethod_OPTIONS,
			},
			AllowHeaders:  jsii.Strings("authorization", "content-type", "accept", "lease-id"),
			ExposeHeaders: jsii.Strings("link", "x-request-id", "content-disposition"),
			MaxAge:        awscdk.Duration_Hours(jsii.Number(1)),
		},
	})
	integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("ApiIntegration"), apiFn, nil)
	s.API.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path: jsii.String("/{proxy+}"),
		// Not ANY: an ANY route would also take OPTIONS and put preflight
		// requests behind the authorizer.
		Methods: &[]awsapigatewayv2.HttpMethod{
			awsapigatewayv2.HttpMethod_GET, awsapigatewayv2.HttpMethod_POST, awsapigatewayv2.HttpMethod_PUT,
			awsapigatewayv2.HttpMethod_PATCH, awsapigatewayv2.HttpMethod_DELETE,
		},
		Integration: integration,
		Authorizer:  authorizer,
	})
	// The page's unload release goes through navigator.sendBeacon, which
	// cannot send an Authorization header; the lease ID in the body is the
	// whole capability Release needs. More specific than /{proxy+}, so this
	// one route skips the authorizer.
	for _, r := range *s.API.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path:        jsii.String(BeaconReleasePath),
		Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_POST},
		Integration: integration,
		Authorizer:  awsapigatewayv2.NewHttpNoneAuthorizer(),
	}) {
		cdknag.NagSuppressions_AddResourceSuppressions(r, &[]*cdknag.NagPackSuppression{{
			Id: jsii.String("AwsSolutions-APIG4"),
			Reason: jsii.String("navigator.sendBeacon (the page-unload lease release) cannot send an Authorization header. The route " +
				"only releases the analysis lease whose 128-bit ID is in the body, the capability the holder was given; it names no user, " +
				"returns nothing, and cannot touch a tracing lease or another browser's lease."),
		}}, jsii.Bool(true))
	}
	accessLogs := awslogs.NewLogGroup(s.Stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention: retention, RemovalPolicy: removal,
	})
	s.Stage = s.API.AddStage(jsii.String("DefaultStage"), &awsapigatewayv2.HttpStageOptions{
		StageName:  jsii.String("$default"),
		AutoDeploy: jsii.Bool(true),
		Throttle: &awsapigatewayv2.ThrottleSettings{
			RateLimit: jsii.Number(cfg.Throttle.RateLimit), BurstLimit: jsii.Number(cfg.Throttle.BurstLimit),
		},
	})
	// Access logs through the L1 stage: the L2 takes them as an interface a
	// Go value would have to implement through jsii.
	s.Stage.Node().DefaultChild().(awsapigatewayv2.CfnStage).SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		DestinationArn: accessLogs.LogGroupArn(),
		Format:         jsii.String(AccessLogFormat),
	})

	// --- Alarms ---------------------------------------------------------
	s.alarms(cfg, streamFn)

	// --- Outputs --------------------------------------------------------
	output := func(id, description string, value *string) {
		awscdk.NewCfnOutput(s.Stack, jsii.String(id), &awscdk.CfnOutputProps{Value: value, Description: jsii.String(description)})
	}
	output("ApiUrl", "Base URL of the HTTP API", s.Stage.Url())
	output("MoviesTableName", "Movies table (MOVIES_TABLE)", s.Movies.TableName())
	output("FramesTableName", "Frames table (FRAMES_TABLE)", s.Frames.TableName())
	output("AuditTableName", "Audit table (AUDIT_TABLE)", s.Audit.TableName())
	output("TraceQueueUrl", "Trace-job queue (TRACE_QUEUE_URL)", s.TraceQueue.QueueUrl())
	output("TraceDlqUrl", "Trace-job dead-letter queue", s.TraceDLQ.QueueUrl())
	output("StreamFailureQueueUrl", "Stream event source on-failure destination", s.StreamFailures.QueueUrl())
	return s
}

// userPool creates the default identity provider: a Cognito user pool with
// administrator-created users, and a public browser client (SRP sign-in, no
// secret) whose ID is the JWT audience.
func (s *Stack) userPool(cfg Config, removal awscdk.RemovalPolicy) (awscognito.UserPool, awscognito.UserPoolClient) {
	pool := awscognito.NewUserPool(s.Stack, jsii.String("UserPool"), &awscognito.UserPoolProps{
		SelfSignUpEnabled:  jsii.Bool(false),
		SignInAliases:      &awscognito.SignInAliases{Email: jsii.Bool(true)},
		AutoVerify:         &awscognito.AutoVerifiedAttrs{Email: jsii.Bool(true)},
		StandardAttributes: &awscognito.StandardAttributes{Fullname: &awscognito.StandardAttribute{Required: jsii.Bool(true), Mutable: jsii.Bool(true)}},
		PasswordPolicy: &awscognito.PasswordPolicy{
			MinLength: jsii.Number(12), RequireLowercase: jsii.Bool(true), RequireUppercase: jsii.Bool(true),
			RequireDigits: jsii.Bool(true), RequireSymbols: jsii.Bool(true),
			TempPasswordValidity: awscdk.Duration_Days(jsii.Number(3)),
		},
		// Authenticator apps only: SMS would need an SNS role and costs per message.
		Mfa:                awscognito.Mfa_REQUIRED,
		MfaSecondFactor:    &awscognito.MfaSecondFactor{Otp: jsii.Bool(true), Sms: jsii.Bool(false)},
		AccountRecovery:    awscognito.AccountRecovery_EMAIL_ONLY,
		FeaturePlan:        awscognito.FeaturePlan_ESSENTIALS,
		DeletionProtection: jsii.Bool(cfg.Retain()),
		RemovalPolicy:      removal,
	})
	cdknag.NagSuppressions_AddResourceSuppressions(pool, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-COG8"),
		Reason: jsii.String("The Plus feature plan (threat protection) is billed per monthly active user; this pool has administrator-created " +
			"users only, requires MFA and a 12-character password policy, and the API is throttled. An environment that needs threat " +
			"protection sets jwt in cdk.json to an identity provider that has it."),
	}}, jsii.Bool(false))
	s.UserPool = pool
	client := pool.AddClient(jsii.String("BrowserClient"), &awscognito.UserPoolClientOptions{
		GenerateSecret:             jsii.Bool(false),
		AuthFlows:                  &awscognito.AuthFlow{UserSrp: jsii.Bool(true)},
		PreventUserExistenceErrors: jsii.Bool(true),
		AccessTokenValidity:        awscdk.Duration_Hours(jsii.Number(1)),
		IdTokenValidity:            awscdk.Duration_Hours(jsii.Number(1)),
		RefreshTokenValidity:       awscdk.Duration_Days(jsii.Number(30)),
		EnableTokenRevocation:      jsii.Bool(true),
	})
	awscdk.NewCfnOutput(s.Stack, jsii.String("UserPoolId"), &awscdk.CfnOutputProps{Value: pool.UserPoolId(), Description: jsii.String("Cognito user pool")})
	awscdk.NewCfnOutput(s.Stack, jsii.String("UserPoolClientId"), &awscdk.CfnOutputProps{Value: client.UserPoolClientId(), Description: jsii.String("Browser client ID (the JWT audience)")})
	return pool, client
}

// alarms watches the queues' depth, the stream processor's iterator age and
// every function's errors and throttles.
func (s *Stack) alarms(cfg Config, streamFn awslambda.Function) {
	period := awscdk.Duration_Minutes(jsii.Number(float64(cfg.Alarms.PeriodMinutes)))
	var action awscloudwatch.IAlarmAction
	if cfg.Alarms.TopicArn != "" {
		action = awscloudwatchactions.NewSnsAction(awssns.Topic_FromTopicArn(s.Stack, jsii.String("AlarmTopic"), jsii.String(cfg.Alarms.TopicArn)))
	}
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

// BeaconReleasePath is the one route without the JWT authorizer.
const BeaconReleasePath = "/movies/{id}/analysis-lease/release"

// AccessLogFormat is the HTTP API's access log line: JSON, with the caller's
// subject but never a token.
const AccessLogFormat = `{"requestId":"$context.requestId","requestTime":"$context.requestTimeEpoch",` +
	`"ip":"$context.identity.sourceIp","method":"$context.httpMethod","path":"$context.path",` +
	`"routeKey":"$context.routeKey","status":"$context.status","protocol":"$context.protocol",` +
	`"responseLength":"$context.responseLength","latencyMs":"$context.responseLatency",` +
	`"integrationLatencyMs":"$context.integrationLatency","integrationError":"$context.integrationErrorMessage",` +
	`"authorizerError":"$context.authorizer.error","sub":"$context.authorizer.claims.sub"}`

// StreamFilters are the movies-stream event filters: Lambda invokes the
// stream processor only for records that match one of them; the others are
// dropped by the event source mapping and never delivered (nor retried).
//
// events.Derive produces an event only when the new image's status is
// tracing (started), when a job's terminal write turns a tracing row into
// traced or tracing_failed (completed, failed), or when a tracing lease is
// replaced (abandoned); the last two have status tracing in the old image,
// because only a live tracing lease's holder can publish the terminal state,
// and a tracing lease exists only with status tracing. So the filters are:
//
//  1. INSERT or MODIFY with NewImage.status = tracing;
//  2. MODIFY with OldImage.status = tracing;
//  3. INSERT with NewImage.status traced or tracing_failed (a row created
//     already finished, which Derive would report as completed/failed).
//
// Changes of movies that are not tracing before or after — analysis lease
// acquisition, heartbeats and release, marker/trim/interval edits, whether
// the movie is ready, traced or tracing_failed — match none of them: they are
// the bulk of the writes and never invoke the function. REMOVE records are
// dropped too (Derive returns nothing for a deleted row).
func StreamFilters() *[]*map[string]interface{} {
	status := func(values ...string) map[string]interface{} {
		return map[string]interface{}{"status": map[string]interface{}{"S": awslambda.FilterRule_Or(*jsii.Strings(values...)...)}}
	}
	return &[]*map[string]interface{}{
		awslambda.FilterCriteria_Filter(&map[string]interface{}{
			"eventName": awslambda.FilterRule_Or(jsii.String("INSERT"), jsii.String("MODIFY")),
			"dynamodb":  map[string]interface{}{"NewImage": status("tracing")},
		}),
		awslambda.FilterCriteria_Filter(&map[string]interface{}{
			"eventName": awslambda.FilterRule_Or(jsii.String("MODIFY")),
			"dynamodb":  map[string]interface{}{"OldImage": status("tracing")},
		}),
		awslambda.FilterCriteria_Filter(&map[string]interface{}{
			"eventName": awslambda.FilterRule_Or(jsii.String("INSERT")),
			"dynamodb":  map[string]interface{}{"NewImage": status("traced", "tracing_failed")},
		}),
	}
}

// ApplyNag runs the cdk-nag AwsSolutions rule pack over scope at synthesis:
// every unsuppressed finding is an error annotation, which fails `cdk synth`
// and the tests.
func ApplyNag(scope constructs.IConstruct) {
	awscdk.Aspects_Of(scope).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
}

func constructID(name string) string {
	switch name {
	case API:
		return "Api"
	case StreamProcessor:
		return "StreamProcessor"
	case Worker:
		return "Worker"
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

// Finding is an annotation of a synthesized cloud assembly, such as a
// cdk-nag finding.
type Finding struct {
	Stack, Path, Message string
}

// Errors reads the error annotations (metadata type aws:cdk:error) of every
// stack in the cloud assembly in dir, as the CDK CLI does before it deploys.
func Errors(dir string) ([]Finding, error) { return Annotations(dir, "aws:cdk:error") }

// Annotations reads the annotations of one metadata type (aws:cdk:error,
// aws:cdk:warning, aws:cdk:info) of every stack in the cloud assembly in dir.
func Annotations(dir, typ string) ([]Finding, error) {
	var manifest struct {
		Artifacts map[string]struct {
			Type                   string                       `json:"type"`
			Metadata               map[string][]json.RawMessage `json:"metadata"`
			AdditionalMetadataFile string                       `json:"additionalMetadataFile"`
		} `json:"artifacts"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	var out []Finding
	for _, name := range sortedNames(manifest.Artifacts) {
		a := manifest.Artifacts[name]
		if a.Type != "aws:cloudformation:stack" {
			continue
		}
		metadata := map[string][]json.RawMessage{}
		for path, entries := range a.Metadata {
			metadata[path] = entries
		}
		if a.AdditionalMetadataFile != "" {
			var more map[string][]json.RawMessage
			b, err := os.ReadFile(filepath.Join(dir, a.AdditionalMetadataFile))
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(b, &more); err != nil {
				return nil, fmt.Errorf("%s: %w", a.AdditionalMetadataFile, err)
			}
			for path, entries := range more {
				metadata[path] = append(metadata[path], entries...)
			}
		}
		for _, path := range sortedNames(metadata) {
			for _, raw := range metadata[path] {
				var e struct {
					Type string `json:"type"`
					Data any    `json:"data"`
				}
				if err := json.Unmarshal(raw, &e); err != nil {
					return nil, fmt.Errorf("%s metadata of %s: %w", name, path, err)
				}
				if e.Type == typ {
					out = append(out, Finding{Stack: name, Path: path, Message: fmt.Sprint(e.Data)})
				}
			}
		}
	}
	return out, nil
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// StackName is the stack (and construct) name of environment env.
func StackName(env string) string { return "TracingLocks-" + env }

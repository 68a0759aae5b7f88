// Package envvar names the environment variables the functions read: the
// one list both sides use, the functions' configuration
// (functions/internal/config) and the CDK stack that sets them (infra),
// which is why it is not under functions/internal.
package envvar

// Set by the CDK stack on the functions (each gets only what it uses).
const (
	MoviesTable    = "MOVIES_TABLE"
	FramesTable    = "FRAMES_TABLE"
	AuditTable     = "AUDIT_TABLE"
	TraceQueueURL  = "TRACE_QUEUE_URL"
	PoisonQueueURL = "POISON_QUEUE_URL" // the stream processor's poison queue
	UploadQueueURL = "UPLOAD_QUEUE_URL" // the ingest's own queue: it continues a movie's next range there
	LeaseSeconds   = "LEASE_SECONDS"
	LogLevel       = "LOG_LEVEL"
	CORSOrigin     = "CORS_ORIGIN"
	MoviesBucket   = "MOVIES_BUCKET"
	MaxUploadBytes = "MOVIE_MAX_BYTES"  // the largest movie file accepted
	PartBytes      = "MOVIE_PART_BYTES" // the part size of an upload in parts
	FFmpeg         = "FFMPEG"
	FFprobe        = "FFPROBE"
	// EditIdleSeconds: how long the page waits without an edit before it asks
	// "Still editing?" (optional; default 10 minutes).
	EditIdleSeconds = "EDIT_IDLE_SECONDS"
)

// Set locally only: the endpoints of the AWS stand-ins (DynamoDB Local, the
// SQS and S3 emulator), or of a proxy in front of them.
const (
	DynamoDBEndpoint = "DYNAMODB_ENDPOINT"
	SQSEndpoint      = "SQS_ENDPOINT"
	S3Endpoint       = "S3_ENDPOINT"
)

// Optional on the worker (unset: the defaults in worker.Options and the
// tracer package); the CDK stack sets none of them, `make run` passes them
// through.
const (
	WorkerStopMargin   = "WORKER_STOP_MARGIN"   // a Go duration: stop taking frames this long before the deadline
	WorkerStartReserve = "WORKER_START_RESERVE" // a Go duration: do not start a job with less time left
	Tracer             = "TRACER"               // "video" (the default with a movies bucket) or "synthetic"
	TracerFrameDelay   = "TRACER_FRAME_DELAY"   // the synthetic tracer's time per frame, a Go duration
	TracerFailAtFrame  = "TRACER_FAIL_AT_FRAME" // the synthetic tracer fails at this frame index
)

// Set by AWS Lambda itself in every function; the API refuses the
// development identity where they are set.
const (
	LambdaFunctionName = "AWS_LAMBDA_FUNCTION_NAME"
	LambdaRuntimeAPI   = "AWS_LAMBDA_RUNTIME_API"
)

// Local stack and tools only.
const (
	// DevAuth=1 lets the local API accept the X-Dev-User headers; set inside
	// Lambda at all, the API refuses to start.
	DevAuth = "DEV_AUTH"
	// WorkerInvocationSeconds is the local worker invocation's budget in
	// whole seconds (in AWS: the worker Lambda's timeout).
	WorkerInvocationSeconds = "WORKER_INVOCATION_SECONDS"
	// IngestInvocationSeconds is how long one ingest invocation prepares
	// frames before it records its range and continues (whole seconds,
	// 1-900; default 600, inside Lambda's 15 minutes).
	IngestInvocationSeconds = "INGEST_INVOCATION_SECONDS"
	// EmulatorStartTimeout bounds the emulators' start (a Go duration).
	EmulatorStartTimeout = "EMULATOR_START_TIMEOUT"
	// The import tool's API, token and development user.
	MoviesAPIURL   = "MOVIES_API_URL"
	MoviesAPIToken = "MOVIES_API_TOKEN"
	MoviesDevUser  = "MOVIES_DEV_USER"
	// SmokePassword is the sign-in password of the browser smoke test.
	SmokePassword = "SMOKE_PASSWORD"
	// The proof suite's output directory and counts file (Makefile, make proof).
	ProofOutput = "PROOF_OUTPUT"
	ProofCounts = "PROOF_COUNTS"
	// ProofBudgetTrace, when set, runs the local stack's literal budget test
	// (2 s worker invocations, a 30 s trace); make proof sets it.
	ProofBudgetTrace = "PROOF_BUDGET_TRACE"
	// ProofLongIngest, when set, runs the local stack's 5-minute clip
	// ingested in 5-second ranges; make proof sets it.
	ProofLongIngest = "PROOF_LONG_INGEST"
)

// Set by the CDK CLI when it runs the app (infra/main.go).
const (
	CDKDefaultAccount = "CDK_DEFAULT_ACCOUNT"
	CDKDefaultRegion  = "CDK_DEFAULT_REGION"
)

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
	LeaseSeconds   = "LEASE_SECONDS"
	LogLevel       = "LOG_LEVEL"
	CORSOrigin     = "CORS_ORIGIN"
	MoviesBucket   = "MOVIES_BUCKET"
	MaxUploadBytes = "MOVIE_MAX_BYTES" // the largest movie file accepted
	FFmpeg         = "FFMPEG"
	FFprobe        = "FFPROBE"
)

// Set locally only: the endpoints of the AWS stand-ins (DynamoDB Local, the
// SQS and S3 emulator), or of a proxy in front of them.
const (
	DynamoDBEndpoint = "DYNAMODB_ENDPOINT"
	SQSEndpoint      = "SQS_ENDPOINT"
	S3Endpoint       = "S3_ENDPOINT"
)

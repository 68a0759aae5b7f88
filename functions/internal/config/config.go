// Package config reads a function's settings from its environment, the way
// the CDK stack sets them (and the local stack imitates).
package config

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
)

// Config is what every function may need; each uses a part of it.
type Config struct {
	Tables   dynamo.Tables
	QueueURL string
	// PoisonQueueURL is where the stream processor sets aside records that
	// can never decode.
	PoisonQueueURL string
	LeaseDuration  time.Duration
	LogLevel       slog.Level
	// DynamoDBEndpoint and SQSEndpoint point the SDK at local emulators;
	// empty in AWS.
	DynamoDBEndpoint string
	SQSEndpoint      string
	// S3Endpoint points the S3 client at the local emulator (path-style).
	S3Endpoint string
	// MoviesBucket holds the uploaded movies and their frame images.
	MoviesBucket string
	// MaxUploadBytes is the largest movie file accepted (MOVIE_MAX_BYTES);
	// 0 means the API's default.
	MaxUploadBytes int64
}

// Environment variable names.
const (
	EnvMoviesTable = "MOVIES_TABLE"
	EnvFramesTable = "FRAMES_TABLE"
	EnvAuditTable  = "AUDIT_TABLE"
	EnvQueueURL    = "TRACE_QUEUE_URL"
	EnvPoisonQueue = "POISON_QUEUE_URL"
	EnvLeaseSecs   = "LEASE_SECONDS"
	EnvLogLevel    = "LOG_LEVEL"
	EnvDynamoDB    = "DYNAMODB_ENDPOINT"
	EnvSQS         = "SQS_ENDPOINT"
	EnvS3          = "S3_ENDPOINT"
	EnvMoviesBkt   = "MOVIES_BUCKET"
	EnvMaxUpload   = "MOVIE_MAX_BYTES"
)

// FromEnv reads the configuration from getenv (os.Getenv in production).
// required lists the variables this function cannot run without.
func FromEnv(getenv func(string) string, required ...string) (Config, error) {
	for _, k := range required {
		if getenv(k) == "" {
			return Config{}, fmt.Errorf("config: %s is not set", k)
		}
	}
	c := Config{
		Tables:           dynamo.Tables{Movies: getenv(EnvMoviesTable), Frames: getenv(EnvFramesTable), Audit: getenv(EnvAuditTable)},
		QueueURL:         getenv(EnvQueueURL),
		PoisonQueueURL:   getenv(EnvPoisonQueue),
		LeaseDuration:    domain.DefaultLeaseDuration,
		DynamoDBEndpoint: getenv(EnvDynamoDB),
		SQSEndpoint:      getenv(EnvSQS),
		S3Endpoint:       getenv(EnvS3),
		MoviesBucket:     getenv(EnvMoviesBkt),
	}
	if v := getenv(EnvMaxUpload); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > 5<<40 {
			return Config{}, fmt.Errorf("config: %s=%q must be a number of bytes from 1 to 5 TiB", EnvMaxUpload, v)
		}
		c.MaxUploadBytes = n
	}
	if v := getenv(EnvLeaseSecs); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 24*3600 {
			return Config{}, fmt.Errorf("config: %s=%q must be 1-86400 seconds", EnvLeaseSecs, v)
		}
		c.LeaseDuration = time.Duration(n) * time.Second
	}
	if v := getenv(EnvLogLevel); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			return Config{}, fmt.Errorf("config: %s=%q: %w", EnvLogLevel, v, err)
		}
	}
	return c, nil
}

// FromProcess is FromEnv(os.Getenv), for Lambda mains, where a missing
// setting is a deployment error best surfaced at init.
func FromProcess(required ...string) (Config, error) { return FromEnv(os.Getenv, required...) }

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
	"github.com/movietrace/tracinglocks/functions/envvar"
)

// Tables names an environment's three tables (the same fields as
// dynamo.Tables, which converts from it: config names things, it does not
// depend on the storage adapter).
type Tables struct {
	Movies string
	Frames string
	Audit  string
}

// Config is what every function may need; each uses a part of it.
type Config struct {
	Tables   Tables
	QueueURL string
	// PoisonQueueURL is where the stream processor sets aside records that
	// can never decode.
	PoisonQueueURL string
	// UploadQueueURL is the ingest's queue (S3 notifications of uploads),
	// where it sends a movie's next range.
	UploadQueueURL string
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
	// PartBytes is the part size of an upload in parts (MOVIE_PART_BYTES,
	// 5 MiB to 5 GiB); 0 means the API's default.
	PartBytes int64
}

// Environment variable names: see package envvar, the one list the CDK
// stack uses too.

// FromEnv reads the configuration from getenv (os.Getenv in production).
// required lists the variables this function cannot run without.
func FromEnv(getenv func(string) string, required ...string) (Config, error) {
	for _, k := range required {
		if getenv(k) == "" {
			return Config{}, fmt.Errorf("config: %s is not set", k)
		}
	}
	c := Config{
		Tables:           Tables{Movies: getenv(envvar.MoviesTable), Frames: getenv(envvar.FramesTable), Audit: getenv(envvar.AuditTable)},
		QueueURL:         getenv(envvar.TraceQueueURL),
		PoisonQueueURL:   getenv(envvar.PoisonQueueURL),
		UploadQueueURL:   getenv(envvar.UploadQueueURL),
		LeaseDuration:    domain.DefaultLeaseDuration,
		DynamoDBEndpoint: getenv(envvar.DynamoDBEndpoint),
		SQSEndpoint:      getenv(envvar.SQSEndpoint),
		S3Endpoint:       getenv(envvar.S3Endpoint),
		MoviesBucket:     getenv(envvar.MoviesBucket),
	}
	if v := getenv(envvar.MaxUploadBytes); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > 5<<40 {
			return Config{}, fmt.Errorf("config: %s=%q must be a number of bytes from 1 to 5 TiB", envvar.MaxUploadBytes, v)
		}
		c.MaxUploadBytes = n
	}
	if v := getenv(envvar.PartBytes); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < domain.MinPartBytes || n > 5<<30 {
			return Config{}, fmt.Errorf("config: %s=%q must be a number of bytes from 5 MiB to 5 GiB", envvar.PartBytes, v)
		}
		c.PartBytes = n
	}
	if v := getenv(envvar.LeaseSeconds); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 24*3600 {
			return Config{}, fmt.Errorf("config: %s=%q must be 1-86400 seconds", envvar.LeaseSeconds, v)
		}
		c.LeaseDuration = time.Duration(n) * time.Second
	}
	if v := getenv(envvar.LogLevel); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			return Config{}, fmt.Errorf("config: %s=%q: %w", envvar.LogLevel, v, err)
		}
	}
	return c, nil
}

// FromProcess is FromEnv(os.Getenv), for Lambda mains, where a missing
// setting is a deployment error best surfaced at init.
func FromProcess(required ...string) (Config, error) { return FromEnv(os.Getenv, required...) }

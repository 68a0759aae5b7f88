// Package testenv gives tests clients for the emulators `make test` starts
// (DynamoDB Local, the SQS emulator). A test that needs one and finds no
// endpoint fails loudly: it never skips, so a green run means it ran.
package testenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
)

func endpoint(tb testing.TB, name string) string {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		tb.Fatalf("%s not set: run the tests with `make test`", name)
	}
	if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		tb.Fatalf("%s=%q is not an http(s) URL like http://127.0.0.1:8000: run the tests with `make test`", name, v)
	}
	return v
}

// Config is the static local configuration: dummy credentials, us-east-1.
func Config() aws.Config {
	return aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	}
}

// DynamoDB returns a client for DynamoDB Local (DYNAMODB_ENDPOINT).
func DynamoDB(tb testing.TB, opts ...func(*dynamodb.Options)) *dynamodb.Client {
	tb.Helper()
	ep := endpoint(tb, envvar.DynamoDBEndpoint)
	return dynamodb.NewFromConfig(Config(), append([]func(*dynamodb.Options){func(o *dynamodb.Options) { o.BaseEndpoint = &ep }}, opts...)...)
}

// Streams returns a DynamoDB Streams client for DynamoDB Local.
func Streams(tb testing.TB, opts ...func(*dynamodbstreams.Options)) *dynamodbstreams.Client {
	tb.Helper()
	ep := endpoint(tb, envvar.DynamoDBEndpoint)
	return dynamodbstreams.NewFromConfig(Config(), append([]func(*dynamodbstreams.Options){func(o *dynamodbstreams.Options) { o.BaseEndpoint = &ep }}, opts...)...)
}

// SQS returns a client for the SQS emulator (SQS_ENDPOINT).
func SQS(tb testing.TB, opts ...func(*sqs.Options)) *sqs.Client {
	tb.Helper()
	ep := endpoint(tb, envvar.SQSEndpoint)
	return sqs.NewFromConfig(Config(), append([]func(*sqs.Options){func(o *sqs.Options) { o.BaseEndpoint = &ep }}, opts...)...)
}

// S3 returns a path-style client for the S3 emulator (S3_ENDPOINT; fauxqs).
func S3(tb testing.TB) *s3.Client {
	tb.Helper()
	return s3store.NewClient(Config(), endpoint(tb, envvar.S3Endpoint))
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// maxName is the longest name UniqueName returns: SQS queue names allow 80
// characters (DynamoDB table names 255), from [A-Za-z0-9_-].
const maxName = 80

// UniqueName returns a table or queue name unique to this test run: the
// prefix and the test's name, sanitized to [A-Za-z0-9_-] and cut to fit,
// then a random suffix; at most 80 bytes, so valid as a DynamoDB table name
// and as a (standard) SQS queue name.
func UniqueName(tb testing.TB, prefix string) string {
	tb.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	suffix := "-" + hex.EncodeToString(b[:])
	name := strings.Trim(unsafeName.ReplaceAllString(prefix+"-"+tb.Name(), "-"), "-")
	if len(name) > maxName-len(suffix) {
		name = name[:maxName-len(suffix)]
	}
	if name == "" {
		name = "test"
	}
	return name + suffix
}

// NewTables creates a fresh set of the project's tables on DynamoDB Local,
// named for this test, and waits until they are active.
func NewTables(tb testing.TB, client *dynamodb.Client) dynamo.Tables {
	tb.Helper()
	t := dynamo.Tables{
		Movies: UniqueName(tb, "movies"),
		Frames: UniqueName(tb, "frames"),
		Audit:  UniqueName(tb, "audit"),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := dynamo.CreateTables(ctx, client, t); err != nil {
		tb.Fatalf("create tables: %v", err)
	}
	return t
}

// LogBuffer collects log output from concurrent writers, for tests that
// assert what was (or was never) logged.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

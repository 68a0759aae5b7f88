package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

const fixtures = "../../../testdata/streams"

// TestReplayCommand replays the recorded fixtures twice through the command
// against the emulators: both runs succeed and the second adds nothing.
func TestReplayCommand(t *testing.T) {
	ddb, sq := testenv.DynamoDB(t), testenv.SQS(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tables := testenv.NewTables(t, ddb)
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(testenv.UniqueName(t, "jobs"))})
	if err != nil {
		t.Fatal(err)
	}
	// The command reads AWS settings the usual way; the emulators take any
	// static credentials.
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	env := map[string]string{
		envvar.AuditTable: tables.Audit, envvar.TraceQueueURL: *q.QueueUrl,
		envvar.DynamoDBEndpoint: os.Getenv(envvar.DynamoDBEndpoint), envvar.SQSEndpoint: os.Getenv(envvar.SQSEndpoint),
	}
	getenv := func(k string) string { return env[k] }

	files, _ := filepath.Glob(filepath.Join(fixtures, "*.json"))
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	// All fixtures as one file: a JSON array of events.
	var all bytes.Buffer
	all.WriteString("[")
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			all.WriteString(",")
		}
		all.Write(data)
	}
	all.WriteString("]")

	count := func() int32 {
		out, err := ddb.Scan(ctx, &dynamodb.ScanInput{TableName: &tables.Audit, Select: "COUNT"})
		if err != nil {
			t.Fatal(err)
		}
		return out.Count
	}
	for pass := range 2 {
		var stdout, stderr bytes.Buffer
		if code := run(ctx, []string{"-file", "-"}, getenv, bytes.NewReader(all.Bytes()), &stdout, &stderr); code != 0 {
			t.Fatalf("pass %d: exit %d\n%s", pass, code, stderr.String())
		}
		if n := strings.Count(stdout.String(), `"batchItemFailures":[]`); n != len(files) {
			t.Fatalf("pass %d: output\n%s", pass, stdout.String())
		}
		if n := count(); n != 10 {
			t.Fatalf("pass %d: %d audit items, want 10", pass, n)
		}
	}

	// One file, dry run: derived events on stdout, nothing written.
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"-dry-run", "-file", filepath.Join(fixtures, "takeover.json")}, func(string) string { return "" }, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("dry run: exit %d\n%s", code, stderr.String())
	}
	if n := strings.Count(stdout.String(), `"derived"`); n != 6 || !strings.Contains(stdout.String(), "movie.tracing.abandoned") {
		t.Fatalf("dry run printed\n%s", stdout.String())
	}
}

func TestReplayCommandErrors(t *testing.T) {
	none := func(string) string { return "" }
	for _, c := range []struct {
		args  []string
		stdin string
		code  int
	}{
		{nil, "", 2},
		{[]string{"-file"}, "", 2},
		{[]string{"-file", "/nonexistent/records.json"}, "", 1},
		{[]string{"-file", "-"}, "not json", 1},
		{[]string{"-file", "-"}, `{"Records":[]}`, 1}, // no AUDIT_TABLE / TRACE_QUEUE_URL
		{[]string{"-dry-run", "-file", "-"}, `{"Records":[{"eventName":"MODIFY","dynamodb":{"SequenceNumber":"1"}}]}`, 1},
	} {
		var stdout, stderr bytes.Buffer
		if got := run(context.Background(), c.args, none, strings.NewReader(c.stdin), &stdout, &stderr); got != c.code {
			t.Errorf("%v %q: exit %d, want %d (%s)", c.args, c.stdin, got, c.code, stderr.String())
		}
	}
}

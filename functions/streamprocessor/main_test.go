package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/internal/wiring"
	"github.com/movietrace/tracinglocks/functions/testkit/awscount"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/schema"
)

// TestStreamProcessorOperationsAreListed hands the recorded stream batches
// (testdata/streams at the root) and a poison record to the stream
// processor, wired as the Lambda wires it (wiring.StreamProcessor on clients
// from the same configuration) with a request counter on its AWS clients,
// and requires testdata/aws-operations.txt to list exactly the operations
// it sent (infra/stack's TestFunctionCallsAreAllowed checks them
// against the streamprocessor role's grants).
func TestStreamProcessorOperationsAreListed(t *testing.T) {
	ddb, sq := testenv.DynamoDB(t), testenv.SQS(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	tables := testenv.NewTables(t, ddb)
	queue := func(prefix string) string {
		q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(testenv.UniqueName(t, prefix))})
		if err != nil {
			t.Fatal(err)
		}
		return *q.QueueUrl
	}
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	vars := map[string]string{
		envvar.AuditTable: tables.Audit, envvar.TraceQueueURL: queue("jobs"), envvar.PoisonQueueURL: queue("poison"),
		envvar.DynamoDBEndpoint: os.Getenv(envvar.DynamoDBEndpoint), envvar.SQSEndpoint: os.Getenv(envvar.SQSEndpoint),
	}
	cfg, err := config.FromEnv(func(k string) string { return vars[k] }, envvar.AuditTable, envvar.TraceQueueURL, envvar.PoisonQueueURL)
	if err != nil {
		t.Fatal(err)
	}
	counter := awscount.Named(vars)
	clients, err := awsclients.New(ctx, cfg, func(c *aws.Config) { c.APIOptions = append(c.APIOptions, counter.APIOption) })
	if err != nil {
		t.Fatal(err)
	}
	h, err := wiring.StreamProcessor(cfg, clients, logging.New(&testenv.LogBuffer{}, cfg.LogLevel))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../testdata/streams/*.json")
	if len(files) == 0 {
		t.Fatal("no recorded stream batches")
	}
	var poison lambdaevents.DynamoDBEventRecord
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := schema.DecodeEvents(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if resp, err := h.Handle(ctx, ev); err != nil || len(resp.BatchItemFailures) > 0 {
				t.Fatalf("%s: %+v, %v", f, resp, err)
			}
			for _, r := range ev.Records {
				if r.Change.NewImage != nil && poison.Change.NewImage == nil {
					poison = r
				}
			}
		}
	}
	// A record that can never decode is set aside on the poison queue.
	img := map[string]lambdaevents.DynamoDBAttributeValue{}
	for k, v := range poison.Change.NewImage {
		img[k] = v
	}
	img[schema.AttrVersion] = lambdaevents.NewStringAttribute("not a number")
	poison.Change.NewImage, poison.Change.SequenceNumber = img, "900000000000000000077"
	if _, err := schema.DecodeRecord(poison); err == nil {
		t.Fatal("the poison record decodes")
	}
	if resp, err := h.Handle(ctx, lambdaevents.DynamoDBEvent{Records: []lambdaevents.DynamoDBEventRecord{poison}}); err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("poison batch: %+v, %v", resp, err)
	}

	unlisted, unseen, err := counter.CompareWithList("testdata/aws-operations.txt")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("calls sent: %v", counter.Calls())
	if len(unlisted)+len(unseen) > 0 {
		t.Errorf("sent but not listed in testdata/aws-operations.txt: %v; listed but not sent: %v", unlisted, unseen)
	}
}

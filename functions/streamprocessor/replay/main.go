// Command replay feeds Lambda-format DynamoDB stream events from a file to
// the stream processor's handler, against the environment configured the
// way the Lambda function is (AUDIT_TABLE, TRACE_QUEUE_URL, and for local
// emulators DYNAMODB_ENDPOINT / SQS_ENDPOINT; AWS credentials and region as
// usual). It is for tests and for operations: re-driving records after an
// incident, e.g. the batch an on-failure destination recorded.
//
//	go run ./functions/streamprocessor/replay -file records.json
//	go run ./functions/streamprocessor/replay -dry-run -file records.json
//	go run ./functions/streamprocessor/replay -failure message.json
//
// -failure takes a message of the stream failure queue (the on-failure
// destination's record: shard and sequence range, not the records), reads
// that batch back from the stream (records are kept 24 hours) and replays
// it as one event (docs/operations.md, StreamFailureDepthAlarm).
//
// The file holds one event ({"Records": [...]}) or a JSON array of events;
// "-" reads standard input. Events are handled in order, each as one
// invocation. Replaying is idempotent: an audit item already present is not
// written again, and a duplicate trace-job message is a no-op for the
// worker. Replay stops at the first event that reports a failed record and
// exits 1, printing the sequence number to resume from; fix the cause and
// replay again (the records before it are done, replaying them is harmless).
//
// -dry-run derives and prints the events each record implies without
// touching AWS.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
	"github.com/movietrace/tracinglocks/functions/internal/wiring"
	"github.com/movietrace/tracinglocks/schema"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// result is the line printed per event.
type result struct {
	Event             int      `json:"event"`
	Records           int      `json:"records"`
	FailedSequenceNos []string `json:"batchItemFailures"`
	Error             string   `json:"error,omitempty"`
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("file", "", `file of Lambda-format DynamoDB stream events ("-" for standard input)`)
	failure := fs.String("failure", "", `file holding a message of the stream failure queue (its body, or what "aws sqs receive-message" prints): `+
		"read that batch back from the stream (shard, sequence range) and replay it")
	dry := fs.Bool("dry-run", false, "print the derived events; do not enqueue or write anything")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if (*file == "") == (*failure == "") || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: replay [-dry-run] -file records.json | -failure message.json")
		return 2
	}
	var evs []lambdaevents.DynamoDBEvent
	if *failure != "" {
		var err error
		if evs, err = readFailedBatch(ctx, *failure, getenv, stdin); err != nil {
			fmt.Fprintln(stderr, "replay:", events.RedactIDs(err.Error()))
			return 1
		}
	} else {
		data, err := readInput(*file, stdin)
		if err != nil {
			fmt.Fprintln(stderr, "replay:", err)
			return 1
		}
		if evs, err = schema.DecodeEvents(data); err != nil {
			fmt.Fprintln(stderr, "replay:", events.RedactIDs(err.Error()))
			return 1
		}
	}
	out := json.NewEncoder(stdout)
	if *dry {
		return dryRun(evs, out, stderr)
	}

	cfg, err := config.FromEnv(getenv, envvar.AuditTable, envvar.TraceQueueURL)
	if err != nil {
		fmt.Fprintln(stderr, "replay:", err)
		return 1
	}
	clients, err := awsclients.New(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "replay:", err)
		return 1
	}
	// With POISON_QUEUE_URL unset (the usual case for an operator), an
	// undecodable record stops the replay and is reported; with it set, it
	// is set aside there as the Lambda does.
	h, err := wiring.StreamProcessor(cfg, clients, logging.New(stderr, cfg.LogLevel))
	if err != nil {
		fmt.Fprintln(stderr, "replay:", err)
		return 1
	}
	for i, ev := range evs {
		resp, err := h.Handle(ctx, ev)
		r := result{Event: i, Records: len(ev.Records), FailedSequenceNos: []string{}}
		for _, f := range resp.BatchItemFailures {
			r.FailedSequenceNos = append(r.FailedSequenceNos, f.ItemIdentifier)
		}
		if err != nil {
			r.Error = err.Error()
		}
		_ = out.Encode(r)
		if err != nil || len(r.FailedSequenceNos) > 0 {
			fmt.Fprintf(stderr, "replay: event %d failed; resume from sequence number %v\n", i, r.FailedSequenceNos)
			return 1
		}
	}
	return 0
}

// readFailedBatch reads the failure queue message in name and the batch it
// describes back from the stream (DYNAMODB_ENDPOINT for DynamoDB Local).
func readFailedBatch(ctx context.Context, name string, getenv func(string) string, stdin io.Reader) ([]lambdaevents.DynamoDBEvent, error) {
	data, err := readInput(name, stdin)
	if err != nil {
		return nil, err
	}
	f, err := streamproc.DecodeFailure(data)
	if err != nil {
		return nil, err
	}
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return nil, err
	}
	clients, err := awsclients.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	recs, err := streamproc.ReadRange(ctx, clients.Streams, f)
	if err != nil {
		return nil, err
	}
	return []lambdaevents.DynamoDBEvent{{Records: recs}}, nil
}

func readInput(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(name)
}

// derived is the line printed per event in a dry run.
type derived struct {
	Event          int          `json:"event"`
	SequenceNumber string       `json:"sequenceNumber"`
	Derived        events.Event `json:"derived"`
}

func dryRun(evs []lambdaevents.DynamoDBEvent, out *json.Encoder, stderr io.Writer) int {
	log := logging.New(stderr, slog.LevelInfo)
	for i, ev := range evs {
		for _, rec := range ev.Records {
			c, err := schema.DecodeRecord(rec)
			if err != nil {
				log.Error("undecodable stream record", slog.Int("event", i),
					slog.String("sequenceNumber", rec.Change.SequenceNumber), slog.String("error", events.RedactIDs(err.Error())))
				return 1
			}
			for _, e := range events.Derive(c.Old, c.New) {
				_ = out.Encode(derived{Event: i, SequenceNumber: rec.Change.SequenceNumber, Derived: e})
			}
		}
	}
	return 0
}

// Command redrive moves the messages of the trace-job dead-letter queue
// back to the trace queue (queue.Redrive: receive, send, delete), with AWS
// credentials and region as usual, and SQS_ENDPOINT for the local emulator.
// `make redrive-trace-dlq ENV=dev` runs it with the stack's queue URLs
// (docs/operations.md, TraceDlqDepthAlarm).
//
//	go run ./functions/worker/redrive -from DLQ_URL -to QUEUE_URL [-max N]
//
// It prints the number of messages moved. A redriven job whose lease was
// replaced or ended meanwhile is refused at its claim and dropped by the
// worker, so redriving is safe; a job whose lease is still its own is traced.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/queue"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("redrive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "the dead-letter queue's URL")
	to := fs.String("to", "", "the trace queue's URL")
	maxN := fs.Int("max", 0, "move at most this many messages (0: all)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *from == "" || *to == "" || fs.NArg() > 0 || *maxN < 0 {
		fmt.Fprintln(stderr, "usage: redrive -from DLQ_URL -to QUEUE_URL [-max N]")
		return 2
	}
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "redrive:", err)
		return 1
	}
	clients, err := awsclients.New(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "redrive:", err)
		return 1
	}
	moved, err := queue.Redrive(ctx, clients.SQS, *from, *to, *maxN)
	fmt.Fprintf(stdout, "redrive: moved %d messages\n", moved)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// Command backfillhistory sets historyKey on the audit items written before
// the audit table had its history index (schema.HistoryIndex), so that they
// appear in GET /movies/{id}/history. The stream processor sets the key on
// every item it writes; only a table with older items needs this, once,
// after the stack that adds the index is deployed. It reads AUDIT_TABLE
// (and DYNAMODB_ENDPOINT for DynamoDB Local) and AWS credentials and region
// as usual, Scans the table for items without the key and sets each with a
// conditional update: running it again, or while the stream processor
// writes, is harmless. It prints {"missing": n, "updated": m}.
//
//	AUDIT_TABLE=... go run ./functions/streamprocessor/backfillhistory -dry-run
//	AUDIT_TABLE=... go run ./functions/streamprocessor/backfillhistory
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("backfillhistory", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dry := fs.Bool("dry-run", false, "only count the items without a history key")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: backfillhistory [-dry-run]")
		return 2
	}
	cfg, err := config.FromEnv(getenv, envvar.AuditTable)
	if err != nil {
		fmt.Fprintln(stderr, "backfillhistory:", err)
		return 1
	}
	clients, err := awsclients.New(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "backfillhistory:", err)
		return 1
	}
	got, err := dynamo.BackfillHistoryKeys(ctx, clients.DynamoDB, cfg.Tables.Audit, *dry)
	_ = json.NewEncoder(stdout).Encode(got)
	if err != nil {
		fmt.Fprintln(stderr, "backfillhistory:", err)
		return 1
	}
	return 0
}

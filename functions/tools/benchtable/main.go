// Command benchtable prints one Markdown table: DynamoDB requests and wall
// time per operation for this project next to the anchors' lock protocol
// (package anchors), both run against the same DynamoDB in this process.
// `make bench` runs it against DynamoDB Local (DYNAMODB_ENDPOINT).
//
//	benchtable [-n 200] [-takeovers 10] [-lease 200ms] [-coldstart 5] [-rie .tools/bin/aws-lambda-rie]
//
// It adds one row for the api bootstrap's cold-start init time under the
// Lambda Runtime Interface Emulator (package coldstart): the median of
// -coldstart fresh processes, or "unavailable: <reason>".
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/testkit/awscount"
	"github.com/movietrace/tracinglocks/functions/testkit/proof/benchcmp"
	"github.com/movietrace/tracinglocks/functions/testkit/proof/coldstart"
)

func main() {
	n := flag.Int("n", 200, "runs of each fast operation")
	takeovers := flag.Int("takeovers", 10, "runs of the stale takeover")
	lease := flag.Duration("lease", 200*time.Millisecond, "lease of the takeover scenario")
	lockStream := flag.Bool("lockstream", true, "give the anchors' lock table a stream too, as the movies table has (DynamoDB Local slows every request on a stream-enabled table)")
	cold := flag.Int("coldstart", 5, "fresh aws-lambda-rie processes for the api cold-start row (0: no row)")
	rie := flag.String("rie", ".tools/bin/aws-lambda-rie", "path of aws-lambda-rie (GOBIN=.tools/bin go install ...)")
	flag.Parse()
	coldN, riePath = *cold, *rie
	if err := run(*n, *takeovers, *lease, *lockStream); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(n, takeovers int, lease time.Duration, lockStream bool) error {
	endpoint := os.Getenv(envvar.DynamoDBEndpoint)
	if endpoint == "" {
		return errors.New(envvar.DynamoDBEndpoint + " is not set: run `make bench`, which starts DynamoDB Local")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	// DynamoDB Local accepts any credentials; static ones keep the SDK from
	// looking for a role.
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
	counter := &awscount.Counter{}
	cfg.APIOptions = append(cfg.APIOptions, counter.APIOption)
	client := awsclients.FromConfig(cfg, config.Config{DynamoDBEndpoint: endpoint}).DynamoDB
	var b [4]byte
	_, _ = rand.Read(b[:])
	env, err := benchcmp.NewEnv(ctx, client, counter, "benchtable-"+hex.EncodeToString(b[:]), lease, lockStream)
	if err != nil {
		return err
	}
	rows, err := env.Run(ctx, env.Scenarios(n, takeovers))
	if err != nil {
		return err
	}
	if coldN > 0 {
		rows = append(rows, coldStartRow(ctx, endpoint))
	}
	streams := "both tables stream-enabled"
	if !lockStream {
		streams = "movies table stream-enabled, lock table not"
	}
	fmt.Printf("DynamoDB requests and wall time per operation, this project vs the anchors' lock protocol (amazon-dynamodb-lock-client / dynamolock), same DynamoDB, same process, sides interleaved; %d runs each, %d takeovers, %s; ratio = anchors ÷ this project\n\n", n, takeovers, streams)
	return benchcmp.Print(os.Stdout, rows)
}

var (
	coldN   int
	riePath string
)

// coldStartRow measures the api bootstrap's init time under aws-lambda-rie
// (median of coldN fresh processes). The row says "unavailable: <reason>"
// instead of a number when it cannot be measured.
func coldStartRow(ctx context.Context, endpoint string) benchcmp.Row {
	row := func(res coldstart.Result, err error) benchcmp.Row {
		if err != nil {
			return benchcmp.Row{Op: "api cold start under aws-lambda-rie (unavailable: " + err.Error() + ")"}
		}
		ms := func(ds []time.Duration) string {
			var b []byte
			for i, d := range ds {
				if i > 0 {
					b = append(b, ' ')
				}
				b = fmt.Appendf(b, "%.1f", float64(d)/float64(time.Millisecond))
			}
			return string(b)
		}
		return benchcmp.Row{Op: fmt.Sprintf("api cold-start init under aws-lambda-rie (median of %d fresh processes: first invocation − second; "+
			"first ms %s, second ms %s; RIE's own Init Duration ms %s, which times only its async init call)",
			len(res.Samples), ms(res.Cold), ms(res.Warm), ms(res.RIEInit)), Project: benchcmp.Measure{N: len(res.Samples), Wall: res.Median}}
	}
	dir, err := os.MkdirTemp("", "coldstart-")
	if err != nil {
		return row(coldstart.Result{}, err)
	}
	defer os.RemoveAll(dir)
	rie, err := filepath.Abs(riePath)
	if err != nil {
		return row(coldstart.Result{}, err)
	}
	bootstrap, err := coldstart.Build(ctx, ".", dir)
	if err != nil {
		return row(coldstart.Result{}, err)
	}
	return row(coldstart.Measure(ctx, coldstart.Options{RIE: rie, Bootstrap: bootstrap, N: coldN, Env: []string{
		envvar.DynamoDBEndpoint + "=" + endpoint, envvar.MoviesTable + "=coldstart-movies", envvar.FramesTable + "=coldstart-frames",
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local",
	}}))
}

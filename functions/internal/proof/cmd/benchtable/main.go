// Command benchtable prints one Markdown table: DynamoDB requests and wall
// time per operation for this project next to the anchors' lock protocol
// (package anchors), both run against the same DynamoDB in this process.
// `make bench` runs it against DynamoDB Local (DYNAMODB_ENDPOINT).
//
//	benchtable [-n 200] [-takeovers 10] [-lease 200ms]
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/awscount"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/proof/benchcmp"
)

func main() {
	n := flag.Int("n", 200, "runs of each fast operation")
	takeovers := flag.Int("takeovers", 10, "runs of the stale takeover")
	lease := flag.Duration("lease", 200*time.Millisecond, "lease of the takeover scenario")
	lockStream := flag.Bool("lockstream", true, "give the anchors' lock table a stream too, as the movies table has (DynamoDB Local slows every request on a stream-enabled table)")
	flag.Parse()
	if err := run(*n, *takeovers, *lease, *lockStream); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(n, takeovers int, lease time.Duration, lockStream bool) error {
	endpoint := os.Getenv(config.EnvDynamoDB)
	if endpoint == "" {
		return errors.New(config.EnvDynamoDB + " is not set: run `make bench`, which starts DynamoDB Local")
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
	streams := "both tables stream-enabled"
	if !lockStream {
		streams = "movies table stream-enabled, lock table not"
	}
	fmt.Printf("DynamoDB requests and wall time per operation, this project vs the anchors' lock protocol (amazon-dynamodb-lock-client / dynamolock), same DynamoDB, same process, sides interleaved; %d runs each, %d takeovers, %s; ratio = anchors ÷ this project\n\n", n, takeovers, streams)
	return benchcmp.Print(os.Stdout, rows)
}

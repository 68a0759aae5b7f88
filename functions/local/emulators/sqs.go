package emulators

import (
	"context"
	_ "embed"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

//go:embed launchers/fauxqs-launcher.mjs
var fauxqsLauncher []byte

// StartSQS starts fauxqs from dir (see EnsureTools) on a free port of
// 127.0.0.1, and returns once it answers ListQueues.
//
// fauxqs's CLI always listens on 0.0.0.0, so it is started through a small
// ESM launcher (launchers/fauxqs-launcher.mjs) that builds the app as the
// CLI does and listens on 127.0.0.1. Queue URLs it hands out are
// http://127.0.0.1:<port>/000000000000/<name>. fauxqs looks queues up by
// their exact URL: use the QueueUrl it returned, never one built by hand.
//
// ctx bounds the startup only; the emulator runs until Stop.
func StartSQS(ctx context.Context, dir string) (*Emulator, error) {
	pkg, err := fauxqsDir(dir)
	if err != nil {
		return nil, fmt.Errorf("start fauxqs: %w", err)
	}
	launcher := filepath.Join(dir, "fauxqs-launcher.mjs")
	if err := writeFileAtomic(launcher, fauxqsLauncher); err != nil {
		return nil, fmt.Errorf("start fauxqs: write launcher: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("start fauxqs: %w", err)
	}
	return start(ctx, spec{
		name:    "fauxqs (SQS)",
		logName: "fauxqs",
		dir:     dir,
		port:    port,
		args:    []string{"node", launcher, pkg, strconv.Itoa(port)},
		probe:   probeSQS,
	})
}

func probeSQS(ctx context.Context, endpoint string) error {
	client := sqs.NewFromConfig(probeConfig(), func(o *sqs.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	})
	_, err := client.ListQueues(ctx, &sqs.ListQueuesInput{MaxResults: aws.Int32(1)})
	return err
}

// probeConfig is the SDK configuration of the readiness probes: dummy
// credentials, us-east-1, one attempt per probe (the caller retries).
func probeConfig() aws.Config {
	return aws.Config{
		Region:           "us-east-1",
		Credentials:      credentials.NewStaticCredentialsProvider("local", "local", ""),
		RetryMaxAttempts: 1,
	}
}

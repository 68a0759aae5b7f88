package emulators

import (
	"context"
	_ "embed"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

//go:embed launchers/LoopbackDynamoDBLocal.java
var dynamoDBLauncher []byte

// StartDynamoDB starts DynamoDB Local from dir (see EnsureTools) in memory
// on a free port of 127.0.0.1, and returns once it answers ListTables.
//
// DynamoDB Local has no option to choose its listen address, so it is
// started through a small Java launcher that binds its Jetty connector to
// 127.0.0.1 (launchers/LoopbackDynamoDBLocal.java). It runs with -sharedDb
// (one database whatever the access key and region, as a developer's CLI
// with real credentials would otherwise see none of the tables) and
// -disableTelemetry.
//
// ctx bounds the startup only; the emulator runs until Stop.
func StartDynamoDB(ctx context.Context, dir string) (*Emulator, error) {
	lib, err := dynamoDBLocalDir(dir)
	if err != nil {
		return nil, fmt.Errorf("start DynamoDB Local: %w", err)
	}
	launcher := filepath.Join(dir, "LoopbackDynamoDBLocal.java")
	if err := writeFileAtomic(launcher, dynamoDBLauncher); err != nil {
		return nil, fmt.Errorf("start DynamoDB Local: write launcher: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("start DynamoDB Local: %w", err)
	}
	return start(ctx, spec{
		name:    "DynamoDB Local",
		logName: "dynamodb",
		dir:     dir,
		port:    port,
		args: []string{"java",
			"-Djava.library.path=" + filepath.Join(lib, "DynamoDBLocal_lib"),
			"-cp", filepath.Join(lib, "DynamoDBLocal.jar"),
			launcher,
			"-inMemory", "-sharedDb", "-disableTelemetry", "-port", strconv.Itoa(port),
		},
		probe: probeDynamoDB,
	})
}

func probeDynamoDB(ctx context.Context, endpoint string) error {
	client := dynamodb.NewFromConfig(probeConfig(), func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	})
	_, err := client.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
	return err
}

package emulators

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

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
// 127.0.0.1 (launchers/LoopbackDynamoDBLocal.java), compiled once into
// dir/classes. It runs with -sharedDb (one database whatever the access key
// and region, as a developer's CLI with real credentials would otherwise see
// none of the tables) and -disableTelemetry, on the C1 JIT only and the
// serial GC, which roughly halve the CPU its startup takes: on two shared
// cores that is most of its startup time.
//
// ctx bounds the startup only; the emulator runs until Stop.
func StartDynamoDB(ctx context.Context, dir string) (*Emulator, error) {
	lib, err := dynamoDBLocalDir(dir)
	if err != nil {
		return nil, fmt.Errorf("start DynamoDB Local: %w", err)
	}
	jar := filepath.Join(lib, "DynamoDBLocal.jar")
	classes, err := compileLauncher(ctx, dir, jar)
	if err != nil {
		return nil, fmt.Errorf("start DynamoDB Local: %w", err)
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
			"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
			"-Djava.library.path=" + filepath.Join(lib, "DynamoDBLocal_lib"),
			"-cp", jar + string(os.PathListSeparator) + classes,
			"LoopbackDynamoDBLocal",
			"-inMemory", "-sharedDb", "-disableTelemetry", "-port", strconv.Itoa(port),
		},
		probe: probeDynamoDB,
	})
}

// compileLauncher compiles the embedded launcher against jar into
// dir/classes/<hash of its source>/ unless that is there already, and
// returns that directory. It runs javac from the JRE's own jdk.compiler
// module, so it needs no JDK.
func compileLauncher(ctx context.Context, dir, jar string) (string, error) {
	sum := sha256.Sum256(dynamoDBLauncher)
	classes := filepath.Join(dir, "classes", hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(classes, "LoopbackDynamoDBLocal.class")); err == nil {
		return classes, nil
	}
	if err := os.MkdirAll(filepath.Dir(classes), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(classes), "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // after a successful rename, there is nothing left to remove
	src := filepath.Join(tmp, "LoopbackDynamoDBLocal.java")
	if err := os.WriteFile(src, dynamoDBLauncher, 0o644); err != nil {
		return "", err
	}
	args := []string{"-m", "jdk.compiler/com.sun.tools.javac.Main", "--release", "17", "-cp", jar, "-d", tmp, src}
	if out, err := exec.CommandContext(ctx, "java", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("compile the loopback launcher (java %s): %w\n%s", strings.Join(args, " "), err, out)
	}
	if err := os.Rename(tmp, classes); err != nil {
		// Another process compiled the same source first: use its classes.
		if _, statErr := os.Stat(filepath.Join(classes, "LoopbackDynamoDBLocal.class")); statErr == nil {
			return classes, nil
		}
		return "", fmt.Errorf("compile the loopback launcher: %w", err)
	}
	return classes, nil
}

func probeDynamoDB(ctx context.Context, endpoint string) error {
	client := dynamodb.NewFromConfig(probeConfig(), func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	})
	_, err := client.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
	return err
}

// Command withemulators runs a command against fresh local emulators:
// DynamoDB Local and fauxqs (SQS), both on free ports of 127.0.0.1.
//
//	go run ./functions/local/withemulators -- go test -count=1 ./...
//	go run ./functions/local/withemulators          # run them in the foreground
//
// (go run reports any non-zero exit as 1 and does not pass SIGTERM on, so
// the Makefile builds it into .tools/bin and runs the binary.)
//
// It installs the emulators into the repository's .tools/ when missing,
// starts both, runs the command with DYNAMODB_ENDPOINT, SQS_ENDPOINT,
// S3_ENDPOINT (fauxqs again: it serves SQS and S3 on one port),
// AWS_REGION=us-east-1 and dummy AWS credentials added to its environment,
// and exits with the command's exit code. The emulators are stopped when the
// command ends, when startup fails, and on SIGINT or SIGTERM, which are
// forwarded to the command first.
//
// With no command it prints the endpoints (as shell exports) and keeps the
// emulators running until interrupted. With a command, each of
// DYNAMODB_ENDPOINT, SQS_ENDPOINT and S3_ENDPOINT already set is used as it
// is, and only the missing emulators start (none when DynamoDB and SQS are
// both given; S3 defaults to the SQS endpoint, as fauxqs serves both), so a
// developer can keep one set of emulators running across many test runs,
// or put a fault-injecting proxy in front of one:
//
//	go run ./functions/local/withemulators            # terminal 1; copy the exports
//	export DYNAMODB_ENDPOINT=... SQS_ENDPOINT=...     # terminal 2
//	make test
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/movietrace/tracinglocks/functions/local/emulators"
)

// localEnv is what every command run here gets in its environment, whatever
// the caller's environment says: dummy credentials can never reach AWS.
var localEnv = []string{
	"AWS_REGION=us-east-1",
	"AWS_ACCESS_KEY_ID=local",
	"AWS_SECRET_ACCESS_KEY=local",
}

func main() {
	os.Exit(run())
}

func run() int {
	toolsFlag := flag.String("tools", "", "directory for the emulators' npm packages and logs (default: .tools at the module root)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: withemulators [-tools dir] [-- command [args...]]\n\n"+
			"Runs command with DYNAMODB_ENDPOINT and SQS_ENDPOINT pointing at fresh DynamoDB Local and fauxqs\n"+
			"emulators on 127.0.0.1; with no command, runs the emulators until interrupted.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	command := flag.Args()

	// Catch the signals before anything starts, so an interrupt during
	// startup still stops what has started.
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)

	dir := *toolsFlag
	if dir == "" {
		var err error
		if dir, err = emulators.ToolsDir(); err != nil {
			logf("%v", err)
			return 1
		}
	}

	// A signal during startup ends it early.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startupSignal := make(chan syscall.Signal, 1)
	go func() {
		select {
		case sig := <-signals:
			logf("%v during startup: stopping", sig)
			startupSignal <- sig.(syscall.Signal)
			cancel()
		case <-ctx.Done():
		}
	}()
	failed := func(err error) int {
		logf("%v", err)
		select {
		case sig := <-startupSignal:
			return 128 + int(sig)
		default:
			return 1
		}
	}
	began := time.Now()
	// Each endpoint already set is used as it is; only the missing
	// emulators start (with a command: without one, this is "run the
	// emulators", so the caller's endpoints are ignored).
	getenv := os.Getenv
	if len(command) == 0 {
		getenv = func(string) string { return "" }
	}
	running, err := emulators.StartMissing(ctx, dir, getenv)
	if err != nil {
		return failed(err)
	}
	cancel() // hand the signals back to the code below
	emus := running.Started
	defer stopAll(emus)
	if len(running.Reused) > 0 {
		logf("using the running emulators %s", strings.Join(running.Reused, " "))
	}
	for _, e := range emus {
		logf("%s at %s", e.Name(), e.Endpoint())
	}
	if len(emus) > 0 {
		logf("ready in %s", time.Since(began).Round(10*time.Millisecond))
	}
	env := append(running.Endpoints.Env(), localEnv...)

	if len(command) == 0 {
		return foreground(env, emus, signals)
	}
	code := runCommand(command, env, signals)
	for _, e := range emus {
		select {
		case <-e.Exited():
			logf("%s died while %s ran, which may explain its failures; its log: %s", e.Name(), command[0], e.LogPath())
			if code == 0 {
				code = 1
			}
		default:
		}
	}
	return code
}

// runCommand runs command with env added to ours, forwards SIGINT and
// SIGTERM to it, and returns its exit code (128+signal if a signal ended it).
func runCommand(command, env []string, signals <-chan os.Signal) int {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = withEnv(os.Environ(), env)
	if err := cmd.Start(); err != nil {
		logf("%v", err)
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case sig := <-signals:
			logf("forwarding %v to %s", sig, command[0])
			_ = cmd.Process.Signal(sig)
		case err := <-done:
			return exitCode(err)
		}
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		logf("%v", err)
		return 1
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return exit.ExitCode()
}

// foreground prints the environment for another shell and waits for a
// signal or for an emulator to die.
func foreground(env []string, emus []*emulators.Emulator, signals <-chan os.Signal) int {
	fmt.Println("# Emulators running; paste into another shell, then run e.g. `make test`:")
	for _, kv := range env {
		fmt.Println("export " + kv)
	}
	logf("Ctrl-C to stop")
	died := make(chan *emulators.Emulator, len(emus))
	for _, e := range emus {
		go func() { <-e.Exited(); died <- e }()
	}
	select {
	case sig := <-signals:
		logf("%v: stopping", sig)
		return 0
	case e := <-died:
		logf("%s exited on its own; its log: %s", e.Name(), e.LogPath())
		return 1
	}
}

func stopAll(emus []*emulators.Emulator) {
	for _, e := range emus {
		if err := e.Stop(); err != nil {
			logf("%v", err)
		}
	}
}

// withEnv returns base with each KEY=value of overrides replacing any
// earlier KEY.
func withEnv(base, overrides []string) []string {
	drop := map[string]bool{}
	for _, kv := range overrides {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	out := make([]string, 0, len(base)+len(overrides))
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, overrides...)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "withemulators: "+format+"\n", args...)
}

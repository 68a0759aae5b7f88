// Package coldstart measures the API Lambda's cold-start init time under the
// Lambda Runtime Interface Emulator (aws-lambda-rie): it builds the api
// bootstrap for this machine's architecture, starts a fresh RIE process per
// sample, invokes it twice with an API Gateway HTTP API (v2) event for
// GET /openapi.json carrying JWT claims, and takes init = first invocation
// (RIE starts the bootstrap on it, as Lambda does on a cold start) minus the
// second (warm) one.
//
// RIE's own REPORT line does print an `Init Duration`, but this RIE measures
// it around its asynchronous sandbox.Init call only (it returns before the
// bootstrap has even started): about 0.1 ms whatever the function does, so
// it is recorded (Result.RIEInit) but not used.
package coldstart

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options of a measurement.
type Options struct {
	RIE       string   // path of aws-lambda-rie
	Bootstrap string   // a built api bootstrap; empty: build one into a temp dir
	Env       []string // extra environment of the function (MOVIES_TABLE, DYNAMODB_ENDPOINT, ...)
	N         int      // fresh processes
}

// Result is the median init time and the samples.
type Result struct {
	Median  time.Duration   // median of Samples
	Samples []time.Duration // per process: first (cold) invocation minus second (warm)
	Cold    []time.Duration // first invocation, request to response
	Warm    []time.Duration // second invocation
	RIEInit []time.Duration // RIE's printed Init Duration (see the package doc)
}

// Build builds the api bootstrap for this machine's GOARCH into dir.
func Build(ctx context.Context, moduleRoot, dir string) (string, error) {
	out := filepath.Join(dir, "bootstrap")
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", out, "./functions/api")
	cmd.Dir = moduleRoot
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+runtime.GOARCH, "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build api bootstrap: %v: %s", err, b)
	}
	return out, nil
}

// Event is the invocation payload: GET /openapi.json through an HTTP API
// with a JWT authorizer.
const Event = `{"version":"2.0","routeKey":"$default","rawPath":"/openapi.json","rawQueryString":"",` +
	`"headers":{"host":"localhost","accept":"application/json"},` +
	`"requestContext":{"accountId":"123456789012","apiId":"local","domainName":"localhost","stage":"$default",` +
	`"requestId":"coldstart","time":"02/Dec/2026:12:00:00 +0000","timeEpoch":1796212800000,` +
	`"http":{"method":"GET","path":"/openapi.json","protocol":"HTTP/1.1","sourceIp":"127.0.0.1","userAgent":"coldstart"},` +
	`"authorizer":{"jwt":{"claims":{"sub":"u-coldstart","name":"Cold Start"},"scopes":null}}},` +
	`"isBase64Encoded":false}`

var initRE = regexp.MustCompile(`Init Duration: ([0-9.]+) ms`)

// Measure runs opts.N fresh RIE processes and returns the median init time.
func Measure(ctx context.Context, opts Options) (Result, error) {
	if _, err := os.Stat(opts.RIE); err != nil {
		return Result{}, fmt.Errorf("aws-lambda-rie not found at %s (go install it into .tools/bin)", opts.RIE)
	}
	var res Result
	for i := 0; i < max(opts.N, 1); i++ {
		cold, warm, rieInit, err := once(ctx, opts)
		if err != nil {
			return Result{}, err
		}
		res.Samples = append(res.Samples, max(cold-warm, 0))
		res.Cold, res.Warm, res.RIEInit = append(res.Cold, cold), append(res.Warm, warm), append(res.RIEInit, rieInit)
	}
	s := slices.Clone(res.Samples)
	slices.Sort(s)
	res.Median = s[len(s)/2]
	if len(s)%2 == 0 {
		res.Median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return res, nil
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// invoke posts the event once and returns the latency of the attempt that
// got an answer (attempts refused while RIE is not yet listening are not
// counted).
func invoke(ctx context.Context, url string, logs *syncBuf) (time.Duration, error) {
	for {
		t0 := time.Now()
		resp, err := http.Post(url, "application/json", strings.NewReader(Event))
		if err == nil {
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			resp.Body.Close()
			d := time.Since(t0)
			if resp.StatusCode != http.StatusOK {
				return 0, fmt.Errorf("invoke: HTTP %d: %s", resp.StatusCode, b.String())
			}
			if !bytes.Contains(b.Bytes(), []byte(`"statusCode":200`)) {
				return 0, fmt.Errorf("GET /openapi.json did not answer 200: %.300s", b.String())
			}
			return d, nil
		}
		if ctx.Err() != nil {
			return 0, fmt.Errorf("aws-lambda-rie never accepted the invocation: %v; logs: %.2000s", err, logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func once(ctx context.Context, opts Options) (cold, warm, rieInit time.Duration, err error) {
	port, err := freePort()
	if err != nil {
		return 0, 0, 0, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, opts.RIE, "--runtime-interface-emulator-address", addr, opts.Bootstrap)
	cmd.Env = append(append(os.Environ(), opts.Env...), "AWS_LAMBDA_FUNCTION_NAME=api", "AWS_REGION=us-east-1")
	logs := &syncBuf{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, fmt.Errorf("start aws-lambda-rie: %w", err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	url := "http://" + addr + "/2015-03-31/functions/function/invocations"
	if cold, err = invoke(ctx, url, logs); err != nil {
		return 0, 0, 0, err
	}
	if warm, err = invoke(ctx, url, logs); err != nil {
		return 0, 0, 0, err
	}
	if m := initRE.FindStringSubmatch(logs.String()); m != nil {
		if ms, err := strconv.ParseFloat(m[1], 64); err == nil {
			rieInit = time.Duration(ms * float64(time.Millisecond))
		}
	}
	return cold, warm, rieInit, nil
}

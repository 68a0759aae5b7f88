package emulators

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// These tests start the real emulators from the repository's .tools/
// (installing them there first if needed): they are the proof that the
// harness `make test` runs under works.

func tools(tb testing.TB) string {
	tb.Helper()
	dir, err := ToolsDir()
	if err != nil {
		tb.Fatal(err)
	}
	if err := EnsureTools(tb.Context(), dir); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func TestDynamoDBLocal(t *testing.T) {
	t.Parallel()
	dir := tools(t)
	began := time.Now()
	emu, err := StartDynamoDB(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("DynamoDB Local answered at %s after %s", emu.Endpoint(), time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() { _ = emu.Stop() })
	assertLoopbackOnly(t, emu.Endpoint())

	ctx := t.Context()
	db := dynamodb.NewFromConfig(probeConfig(), func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(emu.Endpoint()) })
	table := "emulators-test"
	created, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		BillingMode:          ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}},
		StreamSpecification: &ddbtypes.StreamSpecification{
			StreamEnabled:  aws.Bool(true),
			StreamViewType: ddbtypes.StreamViewTypeNewAndOldImages,
		},
	})
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	if aws.ToString(created.TableDescription.LatestStreamArn) == "" {
		t.Errorf("CreateTable with a StreamSpecification returned no LatestStreamArn")
	}
	put := &dynamodb.PutItemInput{
		TableName:           aws.String(table),
		Item:                map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "movie-1"}},
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}
	if _, err := db.PutItem(ctx, put); err != nil {
		t.Fatalf("first conditional PutItem: %v", err)
	}
	var ccf *ddbtypes.ConditionalCheckFailedException
	if _, err := db.PutItem(ctx, put); !errors.As(err, &ccf) {
		t.Fatalf("second conditional PutItem: got %v, want ConditionalCheckFailedException", err)
	}

	// -sharedDb: another access key and region see the same table.
	other := probeConfig()
	other.Region = "eu-west-1"
	got, err := dynamodb.NewFromConfig(other, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(emu.Endpoint()) }).
		GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(table),
			Key:       map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "movie-1"}},
		})
	if err != nil || got.Item == nil {
		t.Fatalf("GetItem from another region: item %v, err %v; want the item (-sharedDb)", got, err)
	}

	assertStops(t, emu, func() error { return probeDynamoDB(t.Context(), emu.Endpoint()) })
}

func TestFauxqs(t *testing.T) {
	t.Parallel()
	dir := tools(t)
	began := time.Now()
	emu, err := StartSQS(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fauxqs answered at %s after %s", emu.Endpoint(), time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() { _ = emu.Stop() })
	assertLoopbackOnly(t, emu.Endpoint())

	ctx := t.Context()
	q := sqs.NewFromConfig(probeConfig(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(emu.Endpoint()) })
	created, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName:  aws.String("emulators-test"),
		Attributes: map[string]string{"VisibilityTimeout": "30"},
	})
	if err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	queueURL := aws.ToString(created.QueueUrl)
	if want := emu.Endpoint() + "/000000000000/emulators-test"; queueURL != want {
		t.Errorf("QueueUrl = %q, want %q", queueURL, want)
	}

	bodies := map[string]bool{"job-1": true, "job-2": true, "job-3": true}
	var entries []sqstypes.SendMessageBatchRequestEntry
	for b := range bodies {
		entries = append(entries, sqstypes.SendMessageBatchRequestEntry{Id: aws.String(b), MessageBody: aws.String(b)})
	}
	sent, err := q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: entries})
	if err != nil {
		t.Fatalf("SendMessageBatch: %v", err)
	}
	if len(sent.Successful) != len(bodies) || len(sent.Failed) != 0 {
		t.Fatalf("SendMessageBatch: %d successful, %d failed; want %d, 0", len(sent.Successful), len(sent.Failed), len(bodies))
	}

	received := map[string]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for len(received) < len(bodies) && time.Now().Before(deadline) {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(queueURL),
			MaxNumberOfMessages:         10,
			WaitTimeSeconds:             1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameApproximateReceiveCount},
		})
		if err != nil {
			t.Fatalf("ReceiveMessage: %v", err)
		}
		for _, m := range out.Messages {
			body := aws.ToString(m.Body)
			if !bodies[body] || received[body] {
				t.Fatalf("received unexpected or duplicate message %q", body)
			}
			if n := m.Attributes["ApproximateReceiveCount"]; n != "1" {
				t.Errorf("message %q: ApproximateReceiveCount = %q, want 1", body, n)
			}
			received[body] = true
			if _, err := q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatalf("DeleteMessage: %v", err)
			}
		}
	}
	if len(received) != len(bodies) {
		t.Fatalf("received %v after 10 s, want all of %v", received, bodies)
	}
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(queueURL),
		AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	if err != nil {
		t.Fatalf("GetQueueAttributes: %v", err)
	}
	for k, v := range attrs.Attributes {
		if v != "0" {
			t.Errorf("after deleting every message, %s = %s, want 0", k, v)
		}
	}

	assertStops(t, emu, func() error { return probeSQS(t.Context(), emu.Endpoint()) })
}

// An emulator that dies under its user is reported by Stop, with its log
// kept for diagnosis.
func TestStopReportsAnEmulatorThatDied(t *testing.T) {
	t.Parallel()
	emu, err := StartSQS(t.Context(), tools(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(emu.LogPath()) })
	if err := emu.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-emu.Exited()
	err = emu.Stop()
	if err == nil || !strings.Contains(err.Error(), "exited before Stop") || !strings.Contains(err.Error(), emu.LogPath()) {
		t.Fatalf("Stop after the process died: %v; want an error naming the log", err)
	}
	if _, statErr := os.Stat(emu.LogPath()); statErr != nil {
		t.Errorf("log of a dead emulator was not kept: %v", statErr)
	}
}

// fakeFauxqs makes a tools directory whose fauxqs app.js is script.
func fakeFauxqs(t *testing.T, script string) string {
	t.Helper()
	dir := t.TempDir()
	app := filepath.Join(dir, "node_modules", "fauxqs", "dist", "app.js")
	if err := os.MkdirAll(filepath.Dir(app), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(app, []byte(script+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A launcher that crashes at startup makes Start fail at once with the tail
// of the emulator's log, which is kept, not after the readiness timeout.
func TestStartupFailureShowsTheLogTail(t *testing.T) {
	t.Parallel()
	dir := fakeFauxqs(t, `throw new Error("boom from a broken fauxqs");`)
	began := time.Now()
	emu, err := StartSQS(t.Context(), dir)
	if err == nil {
		emu.Stop()
		t.Fatal("StartSQS with a broken fauxqs succeeded")
	}
	for _, want := range []string{"process exited during startup", "boom from a broken fauxqs", "(kept)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
	if d := time.Since(began); d > 15*time.Second {
		t.Errorf("StartSQS took %s to notice the crash", d)
	}
	if logs, _ := filepath.Glob(filepath.Join(dir, "logs", "fauxqs-*.log")); len(logs) != 1 {
		t.Errorf("logs after a failed start: %v, want the one log kept", logs)
	}
}

// An emulator that never answers is killed after EMULATOR_START_TIMEOUT.
func TestStartupTimeout(t *testing.T) {
	dir := fakeFauxqs(t, `setInterval(() => {}, 1000); await new Promise(() => {});`) // never finishes loading
	t.Setenv("EMULATOR_START_TIMEOUT", "1s")
	emu, err := StartSQS(t.Context(), dir)
	if err == nil {
		emu.Stop()
		t.Fatal("StartSQS of a fauxqs that never listens succeeded")
	}
	if !strings.Contains(err.Error(), "not answering at http://127.0.0.1:") || !strings.Contains(err.Error(), "EMULATOR_START_TIMEOUT") {
		t.Errorf("error does not explain the timeout:\n%v", err)
	}
	if pids := processesMentioning(t, dir); len(pids) > 0 {
		t.Errorf("processes %v still run from %s after the failed start", pids, dir)
	}

	t.Setenv("EMULATOR_START_TIMEOUT", "soon")
	if _, err := StartSQS(t.Context(), dir); err == nil || !strings.Contains(err.Error(), `EMULATOR_START_TIMEOUT="soon" is not a positive Go duration`) {
		t.Errorf("garbage EMULATOR_START_TIMEOUT: %v", err)
	}
}

func TestStartWithoutToolsSaysWhatToDo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, start := range map[string]func() (*Emulator, error){
		"DynamoDB": func() (*Emulator, error) { return StartDynamoDB(t.Context(), dir) },
		"SQS":      func() (*Emulator, error) { return StartSQS(t.Context(), dir) },
	} {
		if emu, err := start(); err == nil {
			emu.Stop()
			t.Errorf("%s started from an empty tools directory", name)
		} else if !strings.Contains(err.Error(), "call EnsureTools first") {
			t.Errorf("%s: error %q does not say to call EnsureTools", name, err)
		}
	}
}

func TestEnsureToolsNamesMissingRuntimes(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no java, node or npm
	err := EnsureTools(t.Context(), t.TempDir())
	if err == nil {
		t.Fatal("EnsureTools with an empty PATH succeeded")
	}
	for _, want := range []string{
		"java not found on PATH",
		"apt-get install -y openjdk-17-jre-headless",
		"node not found on PATH",
		"npm not found on PATH",
		"Node.js 20 or newer",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
}

func TestEnsureToolsIsFastWhenInstalled(t *testing.T) {
	dir := tools(t) // installs if needed
	began := time.Now()
	if err := EnsureTools(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("EnsureTools with everything installed took %s", d)
	}
}

func TestRuntimeVersionParsing(t *testing.T) {
	for out, want := range map[string]int{
		`openjdk version "17.0.15" 2025-04-15`: 17,
		`java version "1.8.0_392"`:             8,
		`openjdk version "21" 2023-09-19`:      21,
		"v20.20.2":                             20,
		"v18.20.4":                             18,
	} {
		got, err := parseMajor(out)
		if err != nil {
			t.Errorf("%q: %v", out, err)
			continue
		}
		if got != want {
			t.Errorf("%q: major %d, want %d", out, got, want)
		}
	}
	if _, err := parseMajor("command not found"); err == nil {
		t.Error("parseMajor of garbage succeeded")
	}
}

// processesMentioning lists the processes whose command line contains s.
func processesMentioning(t *testing.T, s string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to list processes: %v", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// assertStops checks that Stop ends the emulator, removes its log after a
// clean run, and is idempotent.
func assertStops(t *testing.T, emu *Emulator, probe func() error) {
	t.Helper()
	if err := emu.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case <-emu.Exited():
	default:
		t.Fatal("process still running after Stop returned")
	}
	if err := emu.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := probe(); err == nil {
		t.Errorf("%s still answers after Stop", emu.Name())
	}
	if _, err := os.Stat(emu.LogPath()); !os.IsNotExist(err) {
		t.Errorf("log %s still there after a clean Stop (stat: %v)", emu.LogPath(), err)
	}
}

// assertLoopbackOnly checks, from the kernel's socket table, that whatever
// listens on the endpoint's port listens on a loopback address only.
func assertLoopbackOnly(t *testing.T, endpoint string) {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if u.Hostname() != "127.0.0.1" {
		t.Errorf("endpoint %s is not on 127.0.0.1", endpoint)
	}
	port, _ := strconv.Atoi(u.Port())
	addrs, err := listeners(port)
	if err != nil {
		t.Fatalf("read the socket table: %v", err)
	}
	if len(addrs) == 0 {
		t.Fatalf("nothing listens on port %d", port)
	}
	for _, a := range addrs {
		if !a.IsLoopback() {
			t.Errorf("port %d listens on %s, not only on loopback (all: %v)", port, a, addrs)
		}
	}
}

// listeners returns the local addresses of the TCP sockets listening on
// port, from /proc/net/tcp and /proc/net/tcp6.
func listeners(port int) ([]net.IP, error) {
	var ips []net.IP
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		s := bufio.NewScanner(f)
		s.Scan() // header
		for s.Scan() {
			fields := strings.Fields(s.Text())
			if len(fields) < 4 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			hexIP, hexPort, ok := strings.Cut(fields[1], ":")
			if !ok {
				continue
			}
			if p, err := strconv.ParseUint(hexPort, 16, 16); err != nil || int(p) != port {
				continue
			}
			ip, err := procIP(hexIP)
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			ips = append(ips, ip)
		}
		f.Close()
		if err := s.Err(); err != nil {
			return nil, err
		}
	}
	return ips, nil
}

// procIP decodes an address of /proc/net/tcp{,6}: 32-bit words in host
// (little-endian) byte order.
func procIP(h string) (net.IP, error) {
	b, err := hex.DecodeString(h)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return nil, fmt.Errorf("bad address %q", h)
	}
	ip := make(net.IP, len(b))
	for w := 0; w < len(b); w += 4 {
		ip[w], ip[w+1], ip[w+2], ip[w+3] = b[w+3], b[w+2], b[w+1], b[w]
	}
	return ip, nil
}

// TestStartMissingReusesWhatIsSet: endpoints in the environment are used as
// they are and nothing starts; S3 defaults to the SQS endpoint (fauxqs).
func TestStartMissingReusesWhatIsSet(t *testing.T) {
	env := map[string]string{EnvDynamoDB: "http://127.0.0.1:1111", EnvSQS: "https://proxy.invalid:2222"}
	r, err := StartMissing(t.Context(), t.TempDir(), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := Endpoints{DynamoDB: "http://127.0.0.1:1111", SQS: "https://proxy.invalid:2222", S3: "https://proxy.invalid:2222"}
	if r.Endpoints != want || len(r.Started) != 0 || len(r.Reused) != 2 {
		t.Fatalf("%+v", r)
	}
	env[EnvS3] = "http://127.0.0.1:3333"
	if r, err = StartMissing(t.Context(), t.TempDir(), func(k string) string { return env[k] }); err != nil || r.Endpoints.S3 != env[EnvS3] {
		t.Fatalf("%+v %v", r, err)
	}
}

// TestStartMissingRejectsGarbage: a set endpoint that is no http(s) URL is
// an error, not silently replaced by a fresh emulator.
func TestStartMissingRejectsGarbage(t *testing.T) {
	for _, v := range []string{"127.0.0.1:8000", "ftp://127.0.0.1:21", "http://", "http://[::1", "\x00"} {
		for _, k := range []string{EnvDynamoDB, EnvSQS, EnvS3} {
			env := map[string]string{EnvDynamoDB: "http://127.0.0.1:1", EnvSQS: "http://127.0.0.1:2", k: v}
			if _, err := StartMissing(t.Context(), t.TempDir(), func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), k) {
				t.Errorf("%s=%q: %v", k, v, err)
			}
		}
	}
}

// TestStartMissingStartsOnlyTheMissing: with SQS given, only DynamoDB Local
// starts, and Stop stops it.
func TestStartMissingStartsOnlyTheMissing(t *testing.T) {
	t.Parallel()
	dir := tools(t)
	env := map[string]string{EnvSQS: "http://127.0.0.1:2222"}
	r, err := StartMissing(t.Context(), dir, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	if len(r.Started) != 1 || r.Started[0].Name() != "DynamoDB Local" || r.Endpoints.DynamoDB != r.Started[0].Endpoint() ||
		r.Endpoints.SQS != env[EnvSQS] || r.Endpoints.S3 != env[EnvSQS] {
		t.Fatalf("%+v", r)
	}
	assertLoopbackOnly(t, r.Endpoints.DynamoDB)
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Started[0].Exited():
	default:
		t.Fatal("DynamoDB Local still runs after Stop")
	}
}

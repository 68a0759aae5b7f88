package wiring

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
)

// TestNewProcess: the mains' shared start. A missing or malformed setting
// is an error reported through a usable logger; LOG_LEVEL sets the level.
func TestNewProcess(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	var out bytes.Buffer
	_, log, err := NewProcess(context.Background(), env(nil), &out, envvar.AuditTable)
	if err == nil || !strings.Contains(err.Error(), envvar.AuditTable) || log == nil {
		t.Fatalf("missing setting: %v", err)
	}
	if _, _, err := NewProcess(context.Background(), env(map[string]string{envvar.LogLevel: "chatty"}), &out); err == nil {
		t.Fatal("garbage LOG_LEVEL accepted")
	}
	p, log, err := NewProcess(context.Background(), env(map[string]string{envvar.AuditTable: "a", envvar.LogLevel: "debug"}), &out, envvar.AuditTable)
	if err != nil || p.Config.Tables.Audit != "a" || p.Clients.DynamoDB == nil || p.Clients.SQS == nil || p.Log != log {
		t.Fatalf("%+v %v", p, err)
	}
	out.Reset()
	log.Debug("hello")
	if !strings.Contains(out.String(), `"msg":"hello"`) {
		t.Errorf("LOG_LEVEL=debug not applied: %q", out.String())
	}
}

// TestStreamProcessorWiring: the stream processor needs both clients and
// takes the tables and queues from the configuration.
func TestStreamProcessorWiring(t *testing.T) {
	p, _, err := NewProcess(context.Background(), func(string) string { return "" }, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.Config
	cfg.Tables.Audit, cfg.QueueURL, cfg.PoisonQueueURL = "audit", "https://queue.invalid/jobs", "https://queue.invalid/poison"
	if _, err := StreamProcessor(cfg, awsclientsWithout(p, "sqs"), p.Log); err == nil {
		t.Error("built without an SQS client")
	}
	if _, err := StreamProcessor(cfg, p.Clients, p.Log); err != nil {
		t.Errorf("complete configuration refused: %v", err)
	}
	cfg.QueueURL = ""
	if _, err := StreamProcessor(cfg, p.Clients, p.Log); err == nil {
		t.Error("built without a queue URL")
	}
}

func awsclientsWithout(p Process, which string) awsclients.Clients {
	c := p.Clients
	if which == "sqs" {
		c.SQS = nil
	}
	return c
}

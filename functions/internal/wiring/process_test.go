package wiring

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/functions/envvar"
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

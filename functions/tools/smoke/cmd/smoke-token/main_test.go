package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRefusals: the usage, a page that is not on loopback, a page that does
// not sign in (mode dev), an issuer that is not loopback and a page that
// answers garbage are refused with a reason; nothing is printed on stdout.
func TestRefusals(t *testing.T) {
	serve := func(body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }))
		t.Cleanup(srv.Close)
		return srv.URL + "/"
	}
	for name, c := range map[string]struct {
		args []string
		code int
		why  string
	}{
		"no login":          {[]string{"-url", "http://127.0.0.1:1/"}, 2, "usage"},
		"extra argument":    {[]string{"-login", "alice", "x"}, 2, "usage"},
		"remote page":       {[]string{"-login", "alice", "-url", "http://example.com/"}, 1, "loopback"},
		"https page":        {[]string{"-login", "alice", "-url", "https://127.0.0.1/"}, 1, "not an http URL"},
		"dev-only stack":    {[]string{"-login", "alice", "-url", serve(`{"mode":"dev"}`)}, 1, "-dev-only"},
		"remote issuer":     {[]string{"-login", "alice", "-url", serve(`{"mode":"oidc","authority":"https://login.example.com","clientId":"c"}`)}, 1, "issuer"},
		"garbage config":    {[]string{"-login", "alice", "-url", serve(`<html>`)}, 1, "auth-config.json"},
		"nothing listening": {[]string{"-login", "alice", "-url", "http://127.0.0.1:1/"}, 1, "is make run running"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), c.args, &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.why) || stdout.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want %d and %q", name, code, stderr.String(), stdout.String(), c.code, c.why)
		}
	}
}

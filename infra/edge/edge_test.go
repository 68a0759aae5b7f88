package edge

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// The dev stack's edge as infra/stack keeps it (TestEdgeTemplateIsCurrent).
func devTemplate(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("../stack/testdata/dev-edge.template.json")
	if err != nil {
		t.Fatal(err)
	}
	var tpl map[string]any
	if err := json.Unmarshal(b, &tpl); err != nil {
		t.Fatal(err)
	}
	return tpl
}

var local = Local{Issuer: "http://127.0.0.1:1001/oidc", SignIn: "http://127.0.0.2:1002", Storage: "http://127.0.0.1:1003"}

func directive(csp, name string) []string {
	for _, d := range strings.Split(csp, ";") {
		if f := strings.Fields(d); len(f) > 0 && f[0] == name {
			return f[1:]
		}
	}
	return nil
}

func TestHeadersOfTheDevTemplate(t *testing.T) {
	e, err := FromTemplate(devTemplate(t))
	if err != nil {
		t.Fatal(err)
	}
	h, err := e.Headers(local)
	if err != nil {
		t.Fatal(err)
	}
	csp := h.Get("Content-Security-Policy")
	connect := strings.Join(directive(csp, "connect-src"), " ")
	for _, want := range []string{"'self'", "http://127.0.0.1:1001", "http://127.0.0.2:1002", "http://127.0.0.1:1003"} {
		if !strings.Contains(connect, want) {
			t.Errorf("connect-src %q lacks %s", connect, want)
		}
	}
	if got := strings.Join(directive(csp, "form-action"), " "); strings.Contains(got, "127.0.0.1:1001") || !strings.Contains(got, "127.0.0.2:1002") {
		t.Errorf("form-action %q: the sign-in pages' origin only", got)
	}
	if got := strings.Join(directive(csp, "script-src"), " "); got != "'self'" {
		t.Errorf("script-src %q", got)
	}
	for k, want := range map[string]string{"Strict-Transport-Security": "max-age=63072000; includeSubDomains", "X-Frame-Options": "DENY",
		"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
		if h.Get(k) != want {
			t.Errorf("%s: %q, want %q", k, h.Get(k), want)
		}
	}
	for path, api := range map[string]bool{"/movies": true, "/movies/m1/frames": true, "/openapi.json": true, "/": false, "/app.js": false, "/auth-config.json": false} {
		if e.IsAPI(path) != api {
			t.Errorf("IsAPI(%s) = %v", path, !api)
		}
	}
}

// A CSP that does not allow the issuer (the template before issue 23: only
// the login domain) maps to a local CSP that does not allow the local
// issuer either: the page's discovery fetch is refused locally as in AWS.
func TestAnOriginTheTemplateRefusesStaysRefused(t *testing.T) {
	tpl := devTemplate(t)
	b, _ := json.Marshal(tpl)
	old := strings.Replace(string(b), "https://cognito-idp.", "https://not-the-issuer.", 1)
	var oldTpl map[string]any
	if err := json.Unmarshal([]byte(old), &oldTpl); err != nil {
		t.Fatal(err)
	}
	e, err := FromTemplate(oldTpl)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := e.Headers(local)
	if connect := directive(h.Get("Content-Security-Policy"), "connect-src"); strings.Contains(strings.Join(connect, " "), "127.0.0.1:1001") {
		t.Fatalf("connect-src %v allows the local issuer although the template's does not allow the issuer", connect)
	}
}

func TestSourceMatches(t *testing.T) {
	for _, tc := range []struct {
		source, origin string
		want           bool
	}{
		{"https://*.s3.us-east-1.amazonaws.com", "https://movies.s3.us-east-1.amazonaws.com", true},
		{"https://*.s3.us-east-1.amazonaws.com", "https://s3.us-east-1.amazonaws.com", false},
		{"https://cognito-idp.us-east-1.amazonaws.com", "https://cognito-idp.us-east-1.amazonaws.com", true},
		{"https://cognito-idp.us-east-1.amazonaws.com", "http://cognito-idp.us-east-1.amazonaws.com", false},
		{"https:", "https://x.example", true},
		{"'self'", "https://x.example", false},
		{"x.example", "https://x.example", true},
	} {
		if got := SourceMatches(tc.source, tc.origin); got != tc.want {
			t.Errorf("SourceMatches(%q, %q) = %v", tc.source, tc.origin, got)
		}
	}
}

func TestEval(t *testing.T) {
	v := map[string]any{"Fn::Join": []any{"", []any{"https://", map[string]any{"Fn::Select": []any{2.0,
		map[string]any{"Fn::Split": []any{"/", map[string]any{"Fn::GetAtt": []any{"Api", "ApiEndpoint"}}}}}}}}}
	if _, err := Eval(v); err == nil {
		t.Error("Fn::Select 2 of a 1-element split evaluated")
	}
	if got, err := Eval(map[string]any{"Fn::Join": []any{".", []any{"a", map[string]any{"Ref": "AWS::Region"}}}}); err != nil || got != "a."+Region {
		t.Errorf("%q, %v", got, err)
	}
	if _, err := Eval(map[string]any{"Fn::ImportValue": "x"}); err == nil {
		t.Error("an unknown function evaluated")
	}
}

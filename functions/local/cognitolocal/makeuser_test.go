package cognitolocal

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/local/emulators"
)

// TestMakeUserOnCognitoLocal runs `make user` itself (the AWS CLI's
// admin-create-user) against cognito-local with a pool like the stack's
// (email as the username, name required): the user exists with the given
// email (verified) and display name, in FORCE_CHANGE_PASSWORD (a temporary
// password to change at first sign-in); the same email again fails.
func TestMakeUserOnCognitoLocal(t *testing.T) {
	if _, err := exec.LookPath("aws"); err != nil {
		t.Fatal("the AWS CLI (aws) is not on PATH: make user needs it (.ci/run installs Debian's awscli)")
	}
	tools, err := emulators.ToolsDir()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	dir, err := Ensure(ctx, tools)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	e, err := Start(ctx, dir, t.TempDir(), &syncWriter{b: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	defer e.Stop()
	pool, err := e.Call(ctx, "CreateUserPool", map[string]any{
		"PoolName": "TracingLocks-test", "UsernameAttributes": []string{"email"}, "AutoVerifiedAttributes": []string{"email"},
		"Schema": []map[string]any{{"Name": "name", "AttributeDataType": "String", "Required": true, "Mutable": true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	poolID, _ := pool["UserPool"].(map[string]any)["Id"].(string)
	if poolID == "" {
		t.Fatalf("CreateUserPool: %v", pool)
	}

	makeUser := func(email, name string) (string, error) {
		cmd := exec.CommandContext(ctx, "make", "-s", "-C", "../../..", "user", "ENV=test", "USER_POOL_ID="+poolID,
			"COGNITO_ENDPOINT="+e.URL, "EMAIL="+email, "NAME="+name)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_DEFAULT_REGION=us-east-1",
			"AWS_REGION=us-east-1", "AWS_CONFIG_FILE="+filepath.Join(t.TempDir(), "none"), "AWS_PAGER=")
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	username, err := makeUser("ada@example.test", "Ada Lovelace")
	if err != nil || username == "" {
		t.Fatalf("make user: %v\n%s\ncognito-local:\n%s", err, username, log.String())
	}
	u, err := e.Call(ctx, "AdminGetUser", map[string]any{"UserPoolId": poolID, "Username": "ada@example.test"})
	if err != nil {
		t.Fatal(err)
	}
	attrs := map[string]string{}
	for _, a := range u["UserAttributes"].([]any) {
		a := a.(map[string]any)
		attrs[a["Name"].(string)] = fmt.Sprint(a["Value"])
	}
	if attrs["email"] != "ada@example.test" || attrs["email_verified"] != "true" || attrs["name"] != "Ada Lovelace" ||
		u["UserStatus"] != "FORCE_CHANGE_PASSWORD" || u["Username"] != username {
		t.Errorf("user %v, attributes %v; make user printed %q", u, attrs, username)
	}
	if out, err := makeUser("ada@example.test", "Someone Else"); err == nil {
		t.Errorf("a second make user with the same email succeeded: %s", out)
	}
	if out, err := makeUser("", "No Email"); err == nil || !strings.Contains(out, "EMAIL=... and NAME=... are required") {
		t.Errorf("make user without EMAIL: %v %s", err, out)
	}
}

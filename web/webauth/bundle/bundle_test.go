package bundle_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/functions/local/emulators"
	"github.com/movietrace/tracinglocks/web/webauth"
	"github.com/movietrace/tracinglocks/web/webauth/bundle"
)

// The committed auth.bundle.js is what `make web` builds from src/auth.js
// and the pinned oidc-client-ts: a source edit without a rebuild fails here.
func TestCommittedBundleIsCurrent(t *testing.T) {
	tools, err := emulators.ToolsDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := bundle.EnsurePackages(t.Context(), tools); err != nil {
		t.Fatal(err)
	}
	js, err := bundle.Build(filepath.Join("..", "src", "auth.js"), bundle.NodeModules(tools))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(js, webauth.Bundle()) {
		t.Fatalf("web/webauth/auth.bundle.js is stale (%d bytes, a build gives %d): run `make web`", len(webauth.Bundle()), len(js))
	}
	for _, want := range []string{"tracingAuth", "code_challenge", "refresh_token", "/auth-config.json"} {
		if !strings.Contains(string(js), want) {
			t.Errorf("the bundle lacks %q", want)
		}
	}
}

func TestBuildReportsAMissingPackage(t *testing.T) {
	dir := t.TempDir()
	entry := filepath.Join(dir, "entry.js")
	if err := os.WriteFile(entry, []byte("import { nothing } from 'no-such-package-here';\nconsole.log(nothing);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Build(entry, filepath.Join(dir, "node_modules")); err == nil || !strings.Contains(err.Error(), "no-such-package-here") {
		t.Fatalf("got %v, want an esbuild error naming the package", err)
	}
}

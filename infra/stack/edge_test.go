package stack

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/movietrace/tracinglocks/infra/edge"
)

// EdgeTemplate is the dev stack's synthesized edge (edge.Extract: the
// response headers policy, the distribution, the authorizer, the sign-in
// domain), which the local stack's deployment-shaped mode and its browser
// tests read. TestEdgeTemplateIsCurrent keeps it equal to the synthesis;
// EDGE_UPDATE=1 rewrites it.
const EdgeTemplate = "infra/stack/testdata/dev-edge.template.json"

func TestEdgeTemplateIsCurrent(t *testing.T) {
	fx := synth(t)
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(edge.Extract(fx.json[devStack]), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	path := filepath.Join(root, EdgeTemplate)
	if os.Getenv("EDGE_UPDATE") == "1" {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s is not the dev stack's synthesized edge (%v): run EDGE_UPDATE=1 go test -run TestEdgeTemplateIsCurrent ./infra/stack", EdgeTemplate, err)
	}
	// Every stack's edge reads (the extjwt one has no sign-in domain).
	for _, key := range allStacks() {
		if _, err := edge.FromTemplate(fx.json[key]); err != nil {
			t.Errorf("%s: %v", key, err)
		}
	}
}

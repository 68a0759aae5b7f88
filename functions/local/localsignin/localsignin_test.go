package localsignin

import (
	"testing"

	"github.com/movietrace/tracinglocks/functions/local/stack"
)

func TestConfigPathIsTheStacks(t *testing.T) {
	if ConfigPath != stack.AuthConfigPath {
		t.Fatalf("ConfigPath %q, the stack serves %q", ConfigPath, stack.AuthConfigPath)
	}
}

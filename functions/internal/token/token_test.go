package token

import (
	"testing"

	"github.com/movietrace/tracinglocks/domain"
)

func TestNewIsAValidUniqueLeaseID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := New()
		if !domain.ValidLeaseID(id) {
			t.Fatalf("%q is not a valid lease ID", id)
		}
		if seen[id] {
			t.Fatalf("duplicate ID %q", id)
		}
		seen[id] = true
	}
}

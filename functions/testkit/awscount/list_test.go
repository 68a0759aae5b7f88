package awscount

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestCompareWithList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ops.txt")
	if err := os.WriteFile(path, []byte("# comment\nGetItem\n\nQuery\npresigned PutObject\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Counter{}
	c.add("GetItem")
	c.add("Scan")
	unlisted, unseen, err := c.CompareWithList(path)
	if err != nil || fmt.Sprint(unlisted) != "[Scan]" || fmt.Sprint(unseen) != "[Query]" {
		t.Fatalf("unlisted %v, unseen %v, %v; want [Scan], [Query]", unlisted, unseen, err)
	}
	if _, _, err := c.CompareWithList(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing list was accepted")
	}
}

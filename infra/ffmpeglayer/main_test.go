package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The layer `make layer` builds holds static aarch64 ffmpeg and ffprobe
// from the pinned npm packages (installed from the registry on first use
// into the repository's .tools/).
func TestPackageBuildsAnArm64Layer(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := Package(filepath.Join(root, ".tools", "ffmpeg-layer-npm"), out); err != nil {
		t.Fatal(err)
	}
	for _, p := range Packages {
		path := filepath.Join(out, "bin", p.Binary)
		if err := CheckArm64(path); err != nil {
			t.Error(err)
		}
		st, err := os.Stat(path)
		if err != nil || st.Mode()&0o111 == 0 || st.Size() < 1<<20 {
			t.Errorf("%s: %v, %v", path, st, err)
		}
	}
	// The check itself refuses what is not an aarch64 ELF executable.
	notELF := filepath.Join(out, "not-elf")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\necho ffmpeg\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckArm64(notELF); err == nil {
		t.Error("CheckArm64 accepted a shell script")
	}
}

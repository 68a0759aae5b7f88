// Command ffmpeglayer packages the Lambda layer of the ingest and worker
// functions: static linux-arm64 ffmpeg and ffprobe builds shipped inside
// the npm packages @ffmpeg-installer/linux-arm64 and
// @ffprobe-installer/linux-arm64 (pinned below), copied to <out>/bin, which
// Lambda extracts to /opt/bin. `make layer` runs it into build/ffmpeg-layer.
//
//	go run ./infra/ffmpeglayer -out build/ffmpeg-layer [-cache .tools/ffmpeg-layer-npm]
//
// The packages declare cpu arm64, so npm is told to install them for that
// platform on any machine (--cpu=arm64 --os=linux); no install script runs.
// Each binary is checked to be a static ELF for aarch64 before it is copied.
package main

import (
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Packages are the pinned npm packages and the binary each ships.
var Packages = []struct{ Name, Version, Binary string }{
	{"@ffmpeg-installer/linux-arm64", "4.1.4", "ffmpeg"},
	{"@ffprobe-installer/linux-arm64", "5.2.0", "ffprobe"},
}

func main() {
	out := flag.String("out", "build/ffmpeg-layer", "layer directory to write (bin/ffmpeg, bin/ffprobe)")
	cache := flag.String("cache", ".tools/ffmpeg-layer-npm", "npm prefix the packages are installed into (kept between runs)")
	flag.Parse()
	if err := Package(*cache, *out); err != nil {
		fmt.Fprintln(os.Stderr, "ffmpeglayer:", err)
		os.Exit(1)
	}
	fmt.Printf("ffmpeglayer: %s/bin/ffmpeg and ffprobe (linux-arm64)\n", *out)
}

// Package installs the packages into cache (once) and writes out/bin.
func Package(cache, out string) error {
	if err := install(cache); err != nil {
		return err
	}
	bin := filepath.Join(out, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	for _, p := range Packages {
		src := filepath.Join(cache, "node_modules", p.Name, p.Binary)
		if err := CheckArm64(src); err != nil {
			return err
		}
		if err := copyFile(src, filepath.Join(bin, p.Binary)); err != nil {
			return err
		}
	}
	return nil
}

func install(cache string) error {
	var specs []string
	for _, p := range Packages {
		if installedVersion(cache, p.Name) != p.Version {
			specs = append(specs, p.Name+"@"+p.Version)
		}
	}
	if len(specs) == 0 {
		return nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	args := append([]string{"install", "--prefix", cache, "--no-audit", "--no-fund", "--no-save", "--ignore-scripts",
		"--loglevel=error", "--force", "--cpu=arm64", "--os=linux"}, specs...)
	if b, err := exec.Command("npm", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("npm %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	for _, p := range Packages {
		if v := installedVersion(cache, p.Name); v != p.Version {
			return fmt.Errorf("npm installed %s at version %q, want %s", p.Name, v, p.Version)
		}
	}
	return nil
}

func installedVersion(cache, name string) string {
	b, err := os.ReadFile(filepath.Join(cache, "node_modules", name, "package.json"))
	if err != nil {
		return ""
	}
	const key = `"version"`
	s := string(b)
	i := strings.Index(s, key)
	if i < 0 {
		return ""
	}
	rest := s[i+len(key):]
	start := strings.IndexByte(rest, '"')
	if start < 0 {
		return ""
	}
	end := strings.IndexByte(rest[start+1:], '"')
	if end < 0 {
		return ""
	}
	return rest[start+1 : start+1+end]
}

// CheckArm64 fails unless path is an executable ELF for aarch64 without a
// dynamic interpreter (Lambda's provided.al2023 has no ffmpeg libraries).
func CheckArm64(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 || f.Class != elf.ELFCLASS64 || f.Type != elf.ET_EXEC {
		return fmt.Errorf("%s: %v %v %v, want a 64-bit aarch64 executable", path, f.Class, f.Machine, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New(path + ": dynamically linked, want a static build")
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

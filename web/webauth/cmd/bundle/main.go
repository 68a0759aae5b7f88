// Command bundle is `make web`: it installs the sign-in module's npm
// packages into the tools directory if missing and bundles
// web/webauth/src/auth.js into
// web/webauth/auth.bundle.js (and, with -out, a copy elsewhere,
// e.g. the deployed page's directory).
//
//	go run ./web/webauth/cmd/bundle [-tools .tools] [-out build/web/auth.js]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/movietrace/tracinglocks/functions/local/emulators"
	"github.com/movietrace/tracinglocks/web/webauth/bundle"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

func run() error {
	tools := flag.String("tools", "", "tools directory (default: .tools at the module root)")
	out := flag.String("out", "", "also write the bundle here")
	flag.Parse()
	defaultTools, err := emulators.ToolsDir()
	if err != nil {
		return err
	}
	root := filepath.Dir(defaultTools) // the module root holds .tools
	if *tools == "" {
		*tools = defaultTools
	}
	if err := bundle.EnsurePackages(context.Background(), *tools); err != nil {
		return err
	}
	dir := filepath.Join(root, "web", "webauth")
	js, err := bundle.Build(filepath.Join(dir, "src", "auth.js"), bundle.NodeModules(*tools))
	if err != nil {
		return err
	}
	targets := []string{filepath.Join(dir, "auth.bundle.js")}
	if *out != "" {
		targets = append(targets, *out)
	}
	for _, t := range targets {
		if err := os.MkdirAll(filepath.Dir(t), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(t, js, 0o644); err != nil {
			return err
		}
		fmt.Printf("bundle: wrote %s (%d bytes)\n", t, len(js))
	}
	return nil
}

// Command jsimports reads the import graph of the page's JavaScript modules
// and fails when it has a cycle, a relative import of a missing file, or an
// import a layer rule forbids (make lint runs it on web/):
//
//	go run ./functions/tools/jsimports -forbid actions/:views/ -forbid actions/:app.js web
//
// -forbid from:to (repeatable) refuses any import from a module whose path
// (relative to the root) starts with from of a module whose path starts with
// to. Bare imports (npm packages) and bundles (*.bundle.js, node_modules)
// are not part of the page's graph.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

type forbids []string

func (f *forbids) String() string     { return strings.Join(*f, ",") }
func (f *forbids) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	var rules forbids
	flag.Var(&rules, "forbid", "from:to: modules under from must not import modules under to (repeatable)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: jsimports [-forbid from:to]... <dir>")
		os.Exit(2)
	}
	layers, err := parseRules(rules)
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsimports:", err)
		os.Exit(2)
	}
	g, err := ReadGraph(os.DirFS(flag.Arg(0)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsimports:", err)
		os.Exit(2)
	}
	problems := g.Check(layers)
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, flag.Arg(0)+":", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
	fmt.Printf("jsimports: %d modules, %d imports, no cycle\n", len(g.Imports), g.Edges())
}

func parseRules(rules []string) ([]Rule, error) {
	out := make([]Rule, 0, len(rules))
	for _, r := range rules {
		from, to, ok := strings.Cut(r, ":")
		if !ok || from == "" || to == "" {
			return nil, fmt.Errorf("-forbid %q: want from:to", r)
		}
		out = append(out, Rule{From: from, To: to})
	}
	return out, nil
}

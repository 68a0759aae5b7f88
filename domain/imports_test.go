package domain_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// forbiddenImports are standard packages that do I/O or reach the
// environment; the domain is pure (see doc.go). A path also matches every
// package below it ("net" forbids "net/http").
var forbiddenImports = []string{"os", "net", "io/fs", "io/ioutil", "syscall", "log"}

// clockReads are the functions of package time that read the clock or
// schedule on it; the domain takes now as an argument instead.
var clockReads = map[string]bool{
	"Now": true, "Since": true, "Until": true,
	"Sleep": true, "After": true, "AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true,
}

// TestDomainImportsOnlyThePureStandardLibrary parses every non-test Go file
// of the package and fails on an import outside the standard library (a dot
// in the first path element), an I/O package, a dot import, or a clock read.
func TestDomainImportsOnlyThePureStandardLibrary(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range impurities(fset, f) {
			t.Error(p)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no domain source files found")
	}
}

// impurities lists every rule f breaks, as "file:line: what".
func impurities(fset *token.FileSet, f *ast.File) []string {
	var out []string
	report := func(pos token.Pos, format string, args ...any) {
		out = append(out, fset.Position(pos).String()+": "+fmt.Sprintf(format, args...))
	}
	timeNames := map[string]bool{}
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			report(imp.Pos(), "unreadable import %s", imp.Path.Value)
			continue
		}
		if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
			report(imp.Pos(), "imports %q, which is not in the standard library", path)
		}
		for _, bad := range forbiddenImports {
			if path == bad || strings.HasPrefix(path, bad+"/") {
				report(imp.Pos(), "imports %q, which does I/O", path)
			}
		}
		if imp.Name != nil && imp.Name.Name == "." {
			report(imp.Pos(), "dot-imports %q, which hides where names come from", path)
		}
		if path == "time" {
			name := "time"
			if imp.Name != nil {
				name = imp.Name.Name
			}
			timeNames[name] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && timeNames[x.Name] && clockReads[sel.Sel.Name] {
			report(sel.Pos(), "calls time.%s; pass now in instead", sel.Sel.Name)
		}
		return true
	})
	return out
}

// TestImpuritiesCatchesViolations proves the checker above is not vacuous.
func TestImpuritiesCatchesViolations(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      int
	}{
		{"a pure file passes", `package p; import ("time"; "errors"); func f(now time.Time) error { _ = now.Add(time.Second); return errors.New("x") }`, 0},
		{"a third-party import fails", `package p; import "github.com/x/y"`, 1},
		{"os fails", `package p; import "os"`, 1},
		{"net/http fails", `package p; import "net/http"`, 1},
		{"io/fs fails", `package p; import "io/fs"`, 1},
		{"time.Now fails", `package p; import "time"; var x = time.Now()`, 1},
		{"time.Since and time.Until as values fail", `package p; import "time"; var a, b = time.Since, time.Until`, 2},
		{"a renamed time import does not hide time.Now", `package p; import clock "time"; var x = clock.Now()`, 1},
		{"a dot import of time fails", `package p; import . "time"`, 1},
		{"a method named Now on another value is fine", `package p; type c struct{}; func (c) Now() int { return 0 }; var x = c{}.Now()`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", tc.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if got := impurities(fset, f); len(got) != tc.want {
				t.Fatalf("got %d impurities %q, want %d", len(got), got, tc.want)
			}
		})
	}
}

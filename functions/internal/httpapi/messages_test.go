package httpapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
)

// Internal identifiers a problem's title or detail must not name: a
// snake_case word (a status or refusal code such as awaiting_upload, a
// stored field) or a camelCase one (a field of the movie row or the API's
// JSON: leaseId, cleanBefore). People read these texts; the `code` and
// `field` members are where machines look.
var (
	snakeCase = regexp.MustCompile(`\b[a-z][a-z0-9]*(_[a-z0-9]+)+\b`)
	camelCase = regexp.MustCompile(`\b[a-z]+[A-Z][A-Za-z0-9]*\b`)
)

// quoted is the caller's own input quoted back (%q), which may be anything.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// InternalNames returns the internal identifiers s names (none: nil),
// outside quoted input. The external tests check every problem they
// receive with it.
func InternalNames(s string) []string {
	s = quoted.ReplaceAllString(s, `""`)
	return append(snakeCase.FindAllString(s, -1), camelCase.FindAllString(s, -1)...)
}

func TestInternalNames(t *testing.T) {
	for s, want := range map[string]int{
		"the movie has no frame images (status awaiting_upload)": 1,
		"cleanBefore must not be negative":                       1,
		"This movie's video has not been uploaded yet.":          0,
		"must be 1-64 of A-Z a-z 0-9 _ -":                        0,
		"no development identity (X-Dev-User)":                   0,
		"tracing_failed or leaseId":                              2,
		`duplicate marker ID "my_marker"`:                        0,
		`duplicate marker ID "a\"b" of lease_id`:                 1,
	} {
		if got := InternalNames(s); len(got) != want {
			t.Errorf("InternalNames(%q) = %q, want %d names", s, got, want)
		}
	}
}

// TestProblemTextsNameNoInternals: no title in the one mapping table from
// code to status and title, and no detail the API's refusals are built
// with, names an internal status, code or field. The details are read from
// the source of every package whose refusals reach the API (domain, this
// package, dynamo): each string that becomes an Error's Message, a
// malformed reason, a Problem's Detail, or the format (and arguments) of
// Invalid; a detail may not be built from a status or code value either.
func TestProblemTextsNameNoInternals(t *testing.T) {
	for code, kind := range problemKinds {
		if names := InternalNames(kind.title); len(names) > 0 {
			t.Errorf("title of %s %q names %q", code, kind.title, names)
		}
	}
	for _, s := range []domain.Status{domain.StatusAwaitingUpload, domain.StatusIngestFailed, domain.StatusReady,
		domain.StatusTracing, domain.StatusTraced, domain.StatusFailed, domain.StatusCancelled} {
		msg := domain.NoVideoMessage(domain.Movie{Status: s})
		if names := InternalNames(msg); len(names) > 0 || strings.Contains(msg, string(s)) {
			t.Errorf("the no-video message of a %s movie %q names %q", s, msg, names)
		}
	}
	var texts int
	for _, dir := range []string{"../../../domain", ".", "../dynamo"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v %v", dir, files, err)
		}
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			check := func(e ast.Expr) {
				texts++
				ast.Inspect(e, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.BasicLit:
						if n.Kind == token.STRING {
							s, _ := strconv.Unquote(n.Value)
							if names := InternalNames(s); len(names) > 0 {
								t.Errorf("%s: problem text %s names %q", fset.Position(n.Pos()), n.Value, names)
							}
						}
					case *ast.SelectorExpr:
						if n.Sel.Name == "Status" || n.Sel.Name == "Code" {
							t.Errorf("%s: a problem text is built from a %s value", fset.Position(n.Pos()), n.Sel.Name)
						}
					}
					return true
				})
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CompositeLit:
					typ := typeName(n.Type)
					if typ != "Error" && typ != "malformed" && typ != "Problem" {
						return true
					}
					for _, el := range n.Elts {
						kv, ok := el.(*ast.KeyValueExpr)
						if !ok {
							continue
						}
						if k, ok := kv.Key.(*ast.Ident); ok && (k.Name == "Message" || k.Name == "reason" || k.Name == "Detail") {
							check(kv.Value)
						}
					}
				case *ast.CallExpr:
					switch typeName(n.Fun) {
					case "Invalid":
						for _, a := range n.Args[1:] {
							check(a)
						}
					case "unauthenticated":
						check(n.Args[0])
					}
				}
				return true
			})
		}
	}
	if texts < 50 {
		t.Fatalf("found only %d problem texts: the scan no longer sees how refusals are built", texts)
	}
}

// typeName is the name of an identifier or the selected name of pkg.Name.
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

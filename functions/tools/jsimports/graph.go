package main

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Graph is the page's modules (paths relative to the root, slash-separated)
// and, for each, the modules it imports, in source order.
type Graph struct {
	Imports map[string][]string
	Missing []string // "a.js imports ./b.js, which does not exist"
}

// Rule forbids modules under From to import modules under To.
type Rule struct{ From, To string }

// importRE finds the specifier of static imports and re-exports
// (`import x from '...'`, `import '...'`, `export {x} from '...'`) and of
// dynamic imports (`import('...')`). Comments are stripped first.
var importRE = regexp.MustCompile(`(?:\bimport\s*(?:[\w$*{}\s,]+?\s*from\s*)?|\bexport\s*[\w$*{}\s,]*?\s*from\s*|\bimport\s*\(\s*)['"]([^'"]+)['"]`)

// stripComments blanks // and /* */ comments outside string literals
// (quotes and template literals); a regular expression literal holding a
// quote may confuse it, which the page does not write.
func stripComments(src string) string {
	var b strings.Builder
	var quote byte
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			b.WriteByte(c)
			if c == '\\' && i+1 < len(src) {
				i++
				b.WriteByte(src[i])
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
			b.WriteByte(c)
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return b.String()
			}
			i += end + 3
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ReadGraph reads every .js module under root (but bundles and
// node_modules) and its relative imports.
func ReadGraph(root fs.FS) (*Graph, error) {
	g := &Graph{Imports: map[string][]string{}}
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "node_modules" {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".js") || strings.HasSuffix(p, ".bundle.js") {
			return nil
		}
		src, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		g.Imports[p] = nil
		for _, spec := range Specifiers(string(src)) {
			if !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") && !strings.HasPrefix(spec, "/") {
				continue // a package, not a module of the page
			}
			target := path.Clean(path.Join(path.Dir(p), spec))
			if strings.HasPrefix(spec, "/") {
				target = strings.TrimPrefix(path.Clean(spec), "/")
			}
			if _, err := fs.Stat(root, target); err != nil {
				g.Missing = append(g.Missing, fmt.Sprintf("%s imports %s, which does not exist", p, spec))
				continue
			}
			g.Imports[p] = append(g.Imports[p], target)
		}
		return nil
	})
	return g, err
}

// Specifiers lists the import specifiers of a module's source.
func Specifiers(src string) []string {
	src = stripComments(src)
	var out []string
	for _, m := range importRE.FindAllStringSubmatch(src, -1) {
		out = append(out, m[1])
	}
	return out
}

// Edges counts the imports.
func (g *Graph) Edges() int {
	n := 0
	for _, to := range g.Imports {
		n += len(to)
	}
	return n
}

// Check lists every missing import, every import a rule forbids and every
// cycle (each once, as the path around it).
func (g *Graph) Check(rules []Rule) []string {
	problems := append([]string(nil), g.Missing...)
	names := make([]string, 0, len(g.Imports))
	for n := range g.Imports {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, from := range names {
		for _, to := range g.Imports[from] {
			for _, r := range rules {
				if strings.HasPrefix(from, r.From) && strings.HasPrefix(to, r.To) {
					problems = append(problems, fmt.Sprintf("%s imports %s: modules under %s must not import modules under %s", from, to, r.From, r.To))
				}
			}
		}
	}
	return append(problems, g.cycles(names)...)
}

// cycles finds the cycles a depth-first search meets (a back edge each).
func (g *Graph) cycles(names []string) []string {
	const (
		unseen = iota
		open
		done
	)
	colour := map[string]int{}
	var stack []string
	var out []string
	var visit func(n string)
	visit = func(n string) {
		colour[n] = open
		stack = append(stack, n)
		for _, m := range g.Imports[n] {
			switch colour[m] {
			case unseen:
				visit(m)
			case open:
				i := len(stack) - 1
				for stack[i] != m {
					i--
				}
				loop := append(append([]string(nil), stack[i:]...), m)
				out = append(out, "import cycle: "+strings.Join(loop, " -> "))
			}
		}
		stack = stack[:len(stack)-1]
		colour[n] = done
	}
	for _, n := range names {
		if colour[n] == unseen {
			visit(n)
		}
	}
	return out
}

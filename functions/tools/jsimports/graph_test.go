package main

import (
	"strings"
	"testing"
	"testing/fstest"
)

func check(t *testing.T, files map[string]string, rules ...Rule) []string {
	t.Helper()
	root := fstest.MapFS{}
	for name, src := range files {
		root[name] = &fstest.MapFile{Data: []byte(src)}
	}
	g, err := ReadGraph(root)
	if err != nil {
		t.Fatal(err)
	}
	return g.Check(rules)
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		rules []Rule
		want  []string // substrings of the problems, in order; none: clean
	}{
		{name: "acyclic layers", files: map[string]string{
			"app.js":         "import { a } from './actions/a.js';\nimport * as v from './views/v.js';",
			"actions/a.js":   "import { s } from '../state.js';\nexport const a = 1;",
			"views/v.js":     "import { a } from '../actions/a.js';\nimport { s } from '../state.js';",
			"state.js":       "export const s = 1; // import x from './app.js' in a comment is not an import",
			"auth.bundle.js": "import './app.js';",
			"lib/pkg.js":     "import { html } from 'htm/preact';",
			"webauth/x.js":   "/* import './y.js' */",
		}},
		{name: "two-module cycle", files: map[string]string{
			"a.js": "import { b } from './b.js';",
			"b.js": "import { a } from './a.js';",
		}, want: []string{"import cycle: a.js -> b.js -> a.js"}},
		{name: "five-module cycle through a re-export and a dynamic import", files: map[string]string{
			"analyze.js":  "import { r } from './render.js';",
			"render.js":   "export { s } from './settings.js';",
			"settings.js": "import {\n  m,\n} from './markers.js';",
			"markers.js":  "const c = await import('./cancel.js');",
			"cancel.js":   "import \"./analyze.js\";",
		}, want: []string{"import cycle: analyze.js -> render.js -> settings.js -> markers.js -> cancel.js -> analyze.js"}},
		{name: "self import", files: map[string]string{"a.js": "import './a.js';"}, want: []string{"import cycle: a.js -> a.js"}},
		{name: "missing module", files: map[string]string{"a.js": "import { x } from './gone.js';"},
			want: []string{"a.js imports ./gone.js, which does not exist"}},
		{name: "an action importing a view", files: map[string]string{
			"actions/a.js": "import { draw } from '../views/v.js';",
			"views/v.js":   "export const draw = 1;",
		}, rules: []Rule{{From: "actions/", To: "views/"}},
			want: []string{"actions/a.js imports views/v.js: modules under actions/ must not import modules under views/"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := check(t, c.files, c.rules...)
			if len(got) != len(c.want) {
				t.Fatalf("problems %q, want %d like %q", got, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want %q", i, got[i], w)
				}
			}
		})
	}
}

func FuzzSpecifiers(f *testing.F) {
	f.Add("import { a } from './a.js';\nexport * from \"../b.js\"; import('./c.js')")
	f.Add("/* import './x.js' */ // import './y.js'")
	f.Fuzz(func(t *testing.T, src string) {
		for _, s := range Specifiers(src) {
			if strings.ContainsAny(s, "'\"") {
				t.Fatalf("specifier %q holds a quote", s)
			}
		}
	})
}

package stack

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A recorded call: functions/<name>/testdata/aws-operations.txt, one per
// line, "[presigned] <operation> <resource>[ 404]", where the resource is
// named by the function's configuration variable (awscount.Named):
// MOVIES_TABLE, AUDIT_TABLE/index/history, FRAMES_TABLE:Put (an item of a
// TransactWriteItems), MOVIES_BUCKET/tracker/… (an object key's first
// segment), MOVIES_BUCKET?prefix=frames/… (a listing), TRACE_QUEUE_URL.
type call struct {
	line, op, variable, rest string
	notFound                 bool
}

func readCalls(tb testing.TB, path string) []call {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err) // every function has its list and the test that keeps it
	}
	defer f.Close()
	var out []call
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := call{line: line}
		f := strings.Fields(strings.TrimPrefix(line, "presigned "))
		if len(f) < 2 {
			tb.Errorf("%s: %q names no resource", path, line)
			continue
		}
		c.op, c.notFound = f[0], len(f) == 3 && f[2] == "404"
		i := strings.IndexAny(f[1], "/:?")
		if i < 0 {
			i = len(f[1])
		}
		c.variable, c.rest = f[1][:i], f[1][i:]
		out = append(out, c)
	}
	return out
}

// request is one IAM authorization: an action on a resource ARN (written as
// the template renders it, e.g. "{MoviesTable1234.Arn}/index/history"),
// with the request's condition keys.
type request struct {
	action, resource string
	context          map[string]string
}

// iamItemAction: TransactWriteItems authorizes each item as its kind.
var iamItemAction = map[string]string{"Put": "dynamodb:PutItem", "Delete": "dynamodb:DeleteItem", "Update": "dynamodb:UpdateItem",
	"ConditionCheck": "dynamodb:ConditionCheckItem", "Get": "dynamodb:GetItem"}

// requests are the authorizations IAM makes for c, given the ARN of the
// resource its variable names.
func requests(c call, arn string) ([]request, bool) {
	concrete := strings.ReplaceAll(c.rest, "…", "x")
	switch {
	case strings.HasPrefix(c.rest, ":"): // an item of a transaction
		a, ok := iamItemAction[c.rest[1:]]
		return []request{{action: a, resource: arn}}, ok
	case strings.HasPrefix(c.rest, "?prefix="):
		a, ok := iamAction[c.op]
		return []request{{action: a, resource: arn, context: map[string]string{"s3:prefix": strings.TrimPrefix(concrete, "?prefix=")}}}, ok
	}
	a, ok := iamAction[c.op]
	if !ok || a == "" {
		return nil, ok
	}
	out := []request{{action: a, resource: arn + concrete}}
	if c.notFound && strings.HasPrefix(a, "s3:") {
		// S3 answers a missing key 404 only to a caller allowed to list
		// the bucket (otherwise 403); that check has no s3:prefix.
		out = append(out, request{action: "s3:ListBucket", resource: arn})
	}
	return out, true
}

// statement is one Allow or Deny of a role's policies, rendered.
type statement struct {
	allow      bool
	actions    []string
	resources  []string
	conditions map[string]map[string][]string
}

func roleStatements(tb testing.TB, fx *synthesized, key, fn string) []statement {
	tb.Helper()
	st, tpl := fx.stacks[key], fx.json[key]
	roleID := logicalID(st, st.Roles[fn])
	strs := func(v any) []string {
		var out []string
		if l, ok := v.([]any); ok {
			for _, x := range l {
				out = append(out, render(x))
			}
			return out
		}
		return []string{render(v)}
	}
	var out []statement
	for _, pol := range resources(tpl, "AWS::IAM::Policy") {
		attached := false
		for _, r := range strs(props(pol)["Roles"]) {
			attached = attached || r == "{"+roleID+"}"
		}
		if !attached {
			continue
		}
		list, ok := props(pol)["PolicyDocument"].(map[string]any)["Statement"].([]any)
		if !ok {
			continue
		}
		for _, s := range list {
			s := s.(map[string]any)
			stmt := statement{allow: s["Effect"] == "Allow", actions: strs(s["Action"]), resources: strs(s["Resource"]),
				conditions: map[string]map[string][]string{}}
			if cond, ok := s["Condition"].(map[string]any); ok {
				for op, kv := range cond {
					stmt.conditions[op] = map[string][]string{}
					for k, v := range kv.(map[string]any) {
						stmt.conditions[op][k] = strs(v)
					}
				}
			}
			out = append(out, stmt)
		}
	}
	return out
}

// glob matches an IAM pattern (* any run, ? one character).
func glob(pattern, s string) bool {
	re := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(pattern)) + "$"
	return regexp.MustCompile(re).MatchString(s)
}

// conditionsHold evaluates the condition operators the stack uses; any
// other operator does not hold (so the test never grants by ignorance).
func conditionsHold(conds map[string]map[string][]string, ctx map[string]string) bool {
	for op, kv := range conds {
		base, ifExists := strings.CutSuffix(op, "IfExists")
		for k, patterns := range kv {
			v, present := ctx[k]
			if !present {
				if ifExists {
					continue
				}
				return false
			}
			ok := false
			for _, p := range patterns {
				switch base {
				case "StringLike", "ArnLike":
					ok = ok || glob(p, v)
				case "StringEquals", "ArnEquals":
					ok = ok || p == v
				}
			}
			if !ok {
				return false
			}
		}
	}
	return true
}

func matches(s statement, r request) bool {
	actionOK, resourceOK := false, false
	for _, a := range s.actions {
		actionOK = actionOK || glob(a, r.action)
	}
	for _, p := range s.resources {
		resourceOK = resourceOK || glob(p, r.resource)
	}
	return actionOK && resourceOK && conditionsHold(s.conditions, r.context)
}

// allowed is IAM's decision for one identity-based request: an Allow that
// matches (action, resource, conditions) and no Deny that does.
func allowed(stmts []statement, r request) bool {
	ok := false
	for _, s := range stmts {
		if matches(s, r) {
			if !s.allow {
				return false
			}
			ok = true
		}
	}
	return ok
}

// TestFunctionCallsAreAllowed: every AWS call a function's code makes (its
// aws-operations.txt, which the function's own test keeps equal to what
// its handler sends against the emulators, resources and 404 answers
// included) is allowed by the function's role in the synthesized template:
// the action, on the resource the function's environment names (the
// variable's Ref, as an ARN, with the object key), under the statements'
// conditions, plus s3:ListBucket for a missing key S3 must answer 404 (the
// worker once lacked it: every continuation segment failed with 403). The
// emulators check no IAM; this is what does.
func TestFunctionCallsAreAllowed(t *testing.T) {
	fx := synth(t)
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range Functions {
		calls := readCalls(t, filepath.Join(root, "functions", fn, "testdata", "aws-operations.txt"))
		for _, key := range allStacks() {
			env, _ := props(functionResource(t, fx, key, fn))["Environment"].(map[string]any)["Variables"].(map[string]any)
			stmts := roleStatements(t, fx, key, fn)
			for _, c := range calls {
				v, _ := env[c.variable].(map[string]any)
				ref, ok := v["Ref"].(string)
				if !ok {
					t.Errorf("%s: %s calls %q, but its environment has no %s naming a resource", key, fn, c.line, c.variable)
					continue
				}
				reqs, known := requests(c, "{"+ref+".Arn}")
				if !known {
					t.Errorf("%s: %q: no IAM action known for it (iamAction)", fn, c.line)
				}
				for _, r := range reqs {
					if !allowed(stmts, r) {
						t.Errorf("%s: %s's role refuses %s on %s (context %v), which %q needs", key, fn, r.action, r.resource, r.context, c.line)
					}
				}
			}
		}
	}
}

// The evaluator itself, on statements of the worker's shape.
func TestIAMEvaluator(t *testing.T) {
	get := statement{allow: true, actions: []string{"s3:GetObject"}, resources: []string{"{B.Arn}/tracker/*"}}
	list := statement{allow: true, actions: []string{"s3:ListBucket"}, resources: []string{"{B.Arn}"},
		conditions: map[string]map[string][]string{"StringLike": {"s3:prefix": {"tracker/*"}}}}
	listIfExists := list
	listIfExists.conditions = map[string]map[string][]string{"StringLikeIfExists": {"s3:prefix": {"tracker/*"}}}
	deny := statement{allow: false, actions: []string{"s3:*"}, resources: []string{"*"}}
	missing := call{op: "GetObject", variable: "MOVIES_BUCKET", rest: "/tracker/…", notFound: true}
	reqs, _ := requests(missing, "{B.Arn}")
	for _, tc := range []struct {
		name  string
		stmts []statement
		want  bool
	}{
		{"GetObject only: 403", []statement{get}, false},
		{"ListBucket only when a prefix is given: 403", []statement{get, list}, false},
		{"ListBucket if a prefix exists: 404", []statement{get, listIfExists}, true},
		{"an explicit deny wins", []statement{get, listIfExists, deny}, false},
	} {
		all := true
		for _, r := range reqs {
			all = all && allowed(tc.stmts, r)
		}
		if all != tc.want {
			t.Errorf("%s: allowed %v", tc.name, all)
		}
	}
	other := call{op: "ListObjectsV2", variable: "MOVIES_BUCKET", rest: "?prefix=frames/…"}
	r, _ := requests(other, "{B.Arn}")
	if allowed([]statement{listIfExists}, r[0]) {
		t.Error("a listing of frames/ passed a tracker/* prefix condition")
	}
}

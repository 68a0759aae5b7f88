package dynamo

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/movietrace/tracinglocks/domain"
)

// Every field a rule may name has an attribute: a new domain field without
// one fails here, not on the first write that uses it.
func TestEveryDomainFieldHasAnAttribute(t *testing.T) {
	for _, f := range domain.Fields {
		if _, ok := attributes[f]; !ok {
			t.Errorf("domain field %q has no attribute", f)
		}
	}
	if len(attributes) != len(domain.Fields) {
		t.Errorf("%d attributes for %d domain fields", len(attributes), len(domain.Fields))
	}
}

// The translation of each operator is the SDK's operator of the same name,
// so a drift like >= for > shows in the expression text.
func TestComparisonOperatorsTranslateOneToOne(t *testing.T) {
	for op, want := range map[domain.Op]string{
		domain.OpEq: "=", domain.OpLt: "<", domain.OpLe: "<=", domain.OpGt: ">", domain.OpGe: ">=",
	} {
		c, err := condition(domain.Cmp(domain.FieldTrimEnd, op, 3))
		if err != nil {
			t.Fatal(err)
		}
		expr, err := expression.NewBuilder().WithCondition(c).Build()
		if err != nil {
			t.Fatal(err)
		}
		if got := *expr.Condition(); got != "#0 "+want+" :0" {
			t.Errorf("%s translated to %q", op, got)
		}
	}
}

// Garbage in the rule values is an error, never a panic or a silently
// dropped clause.
func TestUnknownRuleValuesAreErrors(t *testing.T) {
	for name, c := range map[string]domain.Cond{
		"field":    domain.Present{Field: "Nope"},
		"operator": domain.Compare{L: domain.FieldTrimEnd, Op: "~", R: domain.Value{V: 1}},
		"nested":   domain.And{domain.Exists(), domain.Not{C: domain.Absent{Field: "Lease.Nope"}}},
		"size":     domain.Compare{L: domain.SizeOf{Field: "Nope"}, Op: domain.OpGt, R: domain.Value{V: 0}},
		"nil":      nil,
	} {
		if _, err := condition(c); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	for name, u := range map[string][]domain.Assignment{
		"field": {domain.Set("Nope", 1)},
		"op":    {{Op: "multiply", Field: domain.FieldVersion, Value: 2}},
		"copy":  {domain.Copy(domain.FieldCleanBefore, "Nope")},
		"from":  {{Op: domain.AssignCopy, Field: domain.FieldCleanBefore, Value: 3}},
	} {
		if _, err := update(u); err == nil || !strings.Contains(err.Error(), "dynamo:") {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

// Empty junctions keep their logical meaning on a stored movie.
func TestEmptyJunctions(t *testing.T) {
	for c, want := range map[string]string{"and": "attribute_exists (#0)", "or": "attribute_not_exists (#0)"} {
		var cond domain.Cond = domain.And{}
		if c == "or" {
			cond = domain.Or{}
		}
		b, err := condition(cond)
		if err != nil {
			t.Fatal(err)
		}
		expr, err := expression.NewBuilder().WithCondition(b).Build()
		if err != nil {
			t.Fatal(err)
		}
		if got := *expr.Condition(); got != want {
			t.Errorf("empty %s: %q, want %q", c, got, want)
		}
	}
}

// Times are stored as whole milliseconds.
func TestStoredTimeIsMillis(t *testing.T) {
	at := time.UnixMilli(1234).Add(999 * time.Microsecond)
	if got := stored(at); got != int64(1234) {
		t.Fatalf("stored(%v) = %v", at, got)
	}
}

// A copy is one SET of a path from a path: the value comes from the stored
// row, so the caller supplies none.
func TestCopyTranslatesToAPathOperand(t *testing.T) {
	u, err := update([]domain.Assignment{domain.Copy(domain.FieldCleanBefore, domain.FieldTrimEnd)})
	if err != nil {
		t.Fatal(err)
	}
	expr, err := expression.NewBuilder().WithUpdate(u).Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := *expr.Update(); got != "SET #0 = #1\n" || len(expr.Values()) != 0 {
		t.Fatalf("update %q, values %v", got, expr.Values())
	}
	names := expr.Names()
	if names["#0"] != attributes[domain.FieldCleanBefore] || names["#1"] != attributes[domain.FieldTrimEnd] {
		t.Fatalf("names %v", names)
	}
}

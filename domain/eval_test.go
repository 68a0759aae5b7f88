package domain_test

import (
	"testing"

	"github.com/movietrace/tracinglocks/domain"
)

// The evaluator follows DynamoDB's comparison semantics: an absent field or
// a value of another kind never compares, whatever the operator.
func TestHoldsSemantics(t *testing.T) {
	m := newMovie(t)
	m.Settings.Trim = domain.Trim{Start: 10, End: 20}
	leased := m
	leased.Lease = &domain.Lease{Kind: domain.LeaseAnalysis, ID: leaseA, ExpiresAt: at(d)}
	for _, tc := range []struct {
		name string
		c    domain.Cond
		m    *domain.Movie
		want bool
	}{
		{"no movie: nothing exists", domain.Exists(), nil, false},
		{"no movie: absent", domain.Absent{Field: domain.FieldLease}, nil, true},
		{"movie exists", domain.Exists(), &m, true},
		{"trim end >= 20", domain.Cmp(domain.FieldTrimEnd, domain.OpGe, 20), &m, true},
		{"trim end > 20", domain.Cmp(domain.FieldTrimEnd, domain.OpGt, 20), &m, false},
		{"trim end < 20", domain.Cmp(domain.FieldTrimEnd, domain.OpLt, 20), &m, false},
		{"trim end <= 20", domain.Cmp(domain.FieldTrimEnd, domain.OpLe, 20), &m, true},
		{"trim end = 20", domain.Cmp(domain.FieldTrimEnd, domain.OpEq, 20), &m, true},
		{"trim contains start", domain.TrimContains(10), &m, true},
		{"trim excludes end", domain.TrimContains(20), &m, false},
		{"trim excludes below", domain.TrimContains(9), &m, false},
		{"absent field never compares", domain.Cmp(domain.FieldLeaseExpiresAt, domain.OpLe, at(0)), &m, false},
		{"not of absent comparison", domain.Not{C: domain.Cmp(domain.FieldLeaseID, domain.OpEq, leaseA)}, &m, true},
		{"kinds differ", domain.Cmp(domain.FieldTrimEnd, domain.OpEq, "20"), &m, false},
		{"bools only compare equal", domain.Compare{L: domain.Value{V: true}, Op: domain.OpGe, R: domain.Value{V: false}}, &m, false},
		{"bool equal", domain.Claimed(false), &leased, true},
		{"no markers", domain.HasMarkers(), &m, false},
		{"size of a non-list never compares", domain.Compare{L: domain.SizeOf{Field: domain.FieldTrimEnd}, Op: domain.OpGe, R: domain.Value{V: 0}}, &m, false},
		{"live until expiry", domain.LeaseLive(at(d - 1)), &leased, true},
		{"stale at expiry", domain.LeaseLive(at(d)), &leased, false},
		{"no live lease at expiry", domain.NoLiveLease(at(d)), &leased, true},
		{"lease is", domain.LeaseIs(domain.LeaseAnalysis, leaseA, at(0)), &leased, true},
		{"lease of another kind", domain.LeaseIs(domain.LeaseTracing, leaseA, at(0)), &leased, false},
		{"lease of another id", domain.LeaseIs(domain.LeaseAnalysis, leaseB, at(0)), &leased, false},
		{"empty and", domain.And{}, &m, true},
		{"empty or", domain.Or{}, &m, false},
	} {
		if got := domain.Holds(tc.c, tc.m); got != tc.want {
			t.Errorf("%s: Holds = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Condition is Exists and every clause, in order; Decide refuses with the
// first clause that fails.
func TestConditionIsEveryClause(t *testing.T) {
	c := domain.EditTrim{LeaseID: leaseA, Now: t0, Trim: domain.Trim{Start: 0, End: 2000}}
	cond, ok := domain.Condition(c).(domain.And)
	if !ok || len(cond) != 1+len(c.Precondition()) {
		t.Fatalf("Condition = %#v", domain.Condition(c))
	}
	m := newMovie(t)
	if err := domain.Decide(c, nil); domain.ErrorCode(err) != domain.CodeNotFound {
		t.Fatalf("no movie: %v", err)
	}
	if err := domain.Decide(c, &m); domain.ErrorCode(err) != domain.CodeLeaseLost {
		t.Fatalf("no lease: %v (the lease clause comes before the trim clause)", err)
	}
	m = exec(t, m, domain.OpenAnalysis{LeaseID: leaseA, User: alice, Now: t0, Duration: d})
	if e, _ := domain.AsError(domain.Decide(c, &m)); e == nil || e.Field != "trim.end" {
		t.Fatalf("trim past the end: %v", e)
	}
}

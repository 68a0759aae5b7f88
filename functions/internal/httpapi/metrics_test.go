package httpapi_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/emf"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
)

// TestLeaseConflictsAreEMF: a 409 lease_held (Bob opens what Alice edits)
// and a 409 lease_lost (Alice's stale lease was taken over) each write one
// LeaseConflicts record with the API's function and the code as its
// reason, nothing else; other refusals write none. Every series the
// catalogue gives the API is written, and no ID reaches a record.
func TestLeaseConflictsAreEMF(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			var buf bytes.Buffer
			a := newAPIOn(t, tr, tables(t), func(c *httpapi.Config) { c.Metrics = emf.New(&buf, nil) })
			id := a.createMovie()
			al, bo := a.alice(), a.bob()
			al.open(id).want(201)
			bo.open(id).problem(409, domain.CodeLeaseHeld)
			al.editTrim(id, 0, 999).problem(422, domain.CodeInvalid)
			a.clock.Advance(leaseDuration) // Alice's lease goes stale
			bo.open(id).want(201)
			al.heartbeat(id).problem(409, domain.CodeLeaseLost)

			out := buf.String()
			points, err := emf.Parse(strings.NewReader(out))
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			key := func(reason domain.Code) string {
				return emf.KeyOf(emf.LeaseConflicts, map[string]string{emf.DimensionFunction: "api", emf.DimensionReason: string(reason)})
			}
			sums := emf.Sums(points)
			if len(points) != 2 || sums[key(domain.CodeLeaseHeld)] != 1 || sums[key(domain.CodeLeaseLost)] != 1 {
				t.Errorf("points %+v, want one lease_held and one lease_lost:\n%s", points, out)
			}
			if missing, foreign := emf.Coverage(emf.API, points); len(missing)+len(foreign) != 0 {
				t.Errorf("series never written %v, written but not the API's %v", missing, foreign)
			}
			for _, s := range []string{id, al.lease, bo.lease, "Alice", "Bob"} {
				if s != "" && strings.Contains(out, s) {
					t.Errorf("%q reached the metrics:\n%s", s, out)
				}
			}
		})
	}
}

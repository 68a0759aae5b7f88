package httpapi_test

import (
	"reflect"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
)

func (b *browser) correct(id string, body any) *response {
	b.a.t.Helper()
	return b.do("PUT", "/movies/"+id+"/keys", body, b.withLease())
}

// A correction is a key frame: only the lease holder makes it, on a traced
// frame of an existing marker; the metadata shows it; the same one again
// writes nothing; frames from it on leave the clean range, so a retrace
// from it keeps the frames before it.
func TestCorrectPointRoute(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			a := newAPI(t, tr)
			id := a.createMovie(withVideo, func(m *domain.Movie) { m.Settings.Trim = domain.Trim{Start: 0, End: 60} })
			al, bo := a.alice(), a.bob()
			al.open(id).want(201)
			al.trace(id, 0).want(202)
			frames := make([]domain.Frame, 60)
			for i := range frames {
				frames[i] = domain.Frame{Index: i, Points: []domain.Point{{MarkerID: "m1", X: 0.5, Y: 0.5, PX: 320, PY: 240, Confidence: 0.9}}}
			}
			a.runJob(id, frames, true)
			if cb := a.row(id).CleanBefore; cb != 60 {
				t.Fatalf("CleanBefore %d after the trace, want 60", cb)
			}
			al.open(id).want(201)

			body := map[string]any{"markerId": "m1", "frame": 30, "x": 0.25, "y": 0.75}
			bo.do("PUT", "/movies/"+id+"/keys", body).problem(428, domain.CodeLeaseRequired)
			bo.do("PUT", "/movies/"+id+"/keys", body, al.withLease()).problem(409, domain.CodeLeaseHeld)
			d := al.correct(id, body).want(200).detail()
			want := []httpapi.KeyView{{MarkerID: "m1", Frame: 30, X: 0.25, Y: 0.75}}
			if !reflect.DeepEqual(d.Keys, want) {
				t.Fatalf("keys %+v, want %+v", d.Keys, want)
			}
			if row := a.row(id); row.CleanBefore != 30 {
				t.Fatalf("CleanBefore %d after a correction on frame 30, want 30", row.CleanBefore)
			}
			if again := al.correct(id, body).want(200).detail(); again.Version != d.Version {
				t.Fatalf("the same correction wrote again: version %d -> %d", d.Version, again.Version)
			}
			if seen := bo.get(id).want(200).detail(); !reflect.DeepEqual(seen.Keys, want) {
				t.Fatalf("a viewer sees keys %+v", seen.Keys)
			}
			al.correct(id, map[string]any{"markerId": "m1", "frame": 60, "x": 0.5, "y": 0.5}).problem(422, domain.CodeInvalid)

			// The retrace from the key frame starts there: the frames before
			// it are not cleared, and the job's plan starts on it.
			al.trace(id, 30).want(202)
			row := a.row(id)
			if plan := domain.PlanTrace(row, *row.Lease); plan.From != 30 || plan.ClearFrom != 30 {
				t.Fatalf("retrace plan %+v, want it to start and clear from 30", plan)
			}
		})
	}
}

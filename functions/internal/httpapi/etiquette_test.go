package httpapi_test

import (
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
)

// TestAskRelease: a viewer asks the editor to release the movie; everyone's
// metadata, the editor's included, names who asked and when, and never a
// lease ID. Nobody editing is a 409 not_held; a stranger to the API a 401.
func TestAskRelease(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			a := newAPI(t, tr)
			id := a.createMovie()
			al, bo := a.alice(), a.bob()
			ask := func(b *browser) *response { return b.do("POST", "/movies/"+id+"/analysis-lease/release-request", nil) }

			ask(bo).problem(409, domain.CodeNotHeld)
			var grant httpapi.LeaseGrant
			al.open(id).want(201).decode(&grant)
			if grant.IdleSeconds != int(httpapi.DefaultEditIdle.Seconds()) {
				t.Fatalf("the grant's idle time %d s, want the default %v", grant.IdleSeconds, httpapi.DefaultEditIdle)
			}
			var d httpapi.MovieDetail
			resp := ask(bo).want(200)
			if strings.Contains(string(resp.body), grant.LeaseID) {
				t.Fatal("the ask's answer carries the lease ID")
			}
			resp.decode(&d)
			if d.Lock == nil || d.Lock.ReleaseAsk == nil || d.Lock.ReleaseAsk.UserName != bob[1] || d.Lock.ReleaseAsk.At == "" {
				t.Fatalf("Bob's view after his ask: %+v", d.Lock)
			}
			var mine httpapi.MovieDetail
			al.do("GET", "/movies/"+id, nil).want(200).decode(&mine)
			if mine.Lock == nil || !mine.Lock.Yours || mine.Lock.ReleaseAsk == nil || mine.Lock.ReleaseAsk.UserName != bob[1] {
				t.Fatalf("Alice does not see Bob's ask: %+v", mine.Lock)
			}
			// Last active is the lock's start until Alice edits: Bob's ask
			// and her heartbeats are not her activity.
			if mine.Lock.LastActiveAt != mine.Lock.StartedAt {
				t.Fatalf("last active %s, want the lock's start %s before any edit", mine.Lock.LastActiveAt, mine.Lock.StartedAt)
			}
			a.alice().do("POST", "/movies/no-such-movie/analysis-lease/release-request", nil).problem(404, domain.CodeNotFound)
			a.anonymous().do("POST", "/movies/"+id+"/analysis-lease/release-request", nil).want(401)
		})
	}
}

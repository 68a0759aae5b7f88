package httpapi_test

import (
	"context"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
)

// TestCancelTrace: only the user who started the running trace cancels it;
// the movie ends tracing_cancelled with the job's frames kept; the worker's
// next fenced write is refused; a second cancel, or one with no trace
// running, is a 409; anyone else gets a 403 naming the trace's starter.
func TestCancelTrace(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			a := newAPI(t, tr)
			id := a.createMovie()
			al, bo := a.alice(), a.bob()
			cancel := func(b *browser) *response { return b.do("POST", "/movies/"+id+"/traces/cancel", nil) }

			cancel(al).problem(409, domain.CodeNotTracing)
			al.open(id).want(201)
			al.trace(id, 0).want(202)
			job := a.runJob(id, []domain.Frame{{Index: 0, Points: []domain.Point{{MarkerID: "m1", X: 0.5, Y: 0.5}}}}, false)
			p := cancel(bo).problem(403, domain.CodeNotYourTrace)
			if p.Holder == nil || p.Holder.UserName != alice[1] || p.Holder.Kind != domain.LeaseTracing {
				t.Fatalf("Bob's refusal names %+v", p.Holder)
			}
			var d httpapi.MovieDetail
			cancel(al).want(200).decode(&d)
			if d.Status != domain.StatusCancelled || d.Lock != nil || d.LastJob == nil || d.LastJob.Status != domain.StatusCancelled || !d.LastJob.Yours {
				t.Fatalf("after the cancel: %+v (last job %+v)", d, d.LastJob)
			}
			// The job published no progress before the cancel, yet wrote a
			// frame: the cancel counts and records it (issue 25: the list
			// said 417 frames while 601 were stored).
			if d.TracedFrames != 1 || d.LastJob.Frames != 1 || d.Progress.FramesWritten != 1 {
				t.Fatalf("after the cancel: %d traced frames, the job %d, progress %+v; want the 1 frame stored", d.TracedFrames, d.LastJob.Frames, d.Progress)
			}
			// The worker's next fenced write is refused: it stops.
			if _, err := a.fx.movies.Commit(context.Background(), id, domain.RenewJob{
				JobFence: domain.JobFence{JobID: job.ID, Now: a.clock.Now()}, Duration: leaseDuration, FramesWritten: 2}); domain.ErrorCode(err) != domain.CodeLeaseLost {
				t.Fatalf("the worker's write after the cancel: %v", err)
			}
			// The frame it wrote is kept.
			var page httpapi.FramePage
			bo.do("GET", "/movies/"+id+"/frames", nil).want(200).decode(&page)
			if len(page.Frames) != 1 {
				t.Fatalf("frames after the cancel: %+v", page.Frames)
			}
			cancel(al).problem(409, domain.CodeNotTracing)
			a.alice().do("POST", "/movies/no-such-movie/traces/cancel", nil).problem(404, domain.CodeNotFound)
			a.anonymous().do("POST", "/movies/"+id+"/traces/cancel", nil).want(401)
			// A new trace can start at once.
			al.open(id).want(201)
			al.trace(id, 0).want(202)
		})
	}
}

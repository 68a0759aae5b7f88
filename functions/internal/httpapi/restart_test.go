package httpapi_test

import (
	"context"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/token"
)

// TestRestartSaysWhatARetraceKeeps (issue 20 item 4): a trace that handed
// off at frame 100 and then failed is shown with restart.resumeFrom 100; a
// retrace from there starts at 100. After a markers edit the same movie says
// its frames are replaced.
func TestRestartSaysWhatARetraceKeeps(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			a := newAPI(t, tr)
			id := a.createMovie()
			al := a.alice()
			if d := al.get(id).want(200).detail(); d.Restart != nil {
				t.Fatalf("a ready movie offers %+v", d.Restart)
			}
			al.open(id).want(201)
			al.trace(id, 0).want(202)
			a.failAfterCheckpoint(id, 100)
			d := al.get(id).want(200).detail()
			if d.Status != domain.StatusFailed || d.Restart == nil || *d.Restart != (httpapi.RestartView{Resumes: true, ResumeFrom: 100}) {
				t.Fatalf("after the failure: %+v restart %+v", d, d.Restart)
			}
			al.open(id).want(201)
			al.do("PUT", "/movies/"+id+"/markers", map[string]any{"markers": []httpapi.MarkerView{{ID: "m2", Label: "heel", X: 0.3, Y: 0.3}}},
				al.withLease()).want(200)
			d = al.get(id).want(200).detail()
			if d.Restart == nil || *d.Restart != (httpapi.RestartView{Replaces: true}) {
				t.Fatalf("after a markers edit: restart %+v", d.Restart)
			}
		})
	}
}

// failAfterCheckpoint claims the movie's trace, hands it off with
// `checkpoint` frames durable, claims the next segment and fails the job as
// the worker does when the continuation cannot be sent.
func (a *api) failAfterCheckpoint(id string, checkpoint int) {
	a.t.Helper()
	ctx, now := context.Background(), a.clock.Now()
	job := a.runJob(id, nil, false)
	fence := domain.JobFence{JobID: job.ID, Now: now}
	for _, c := range []domain.Command{
		domain.BeginTrace{JobFence: fence, Duration: leaseDuration, CleanBefore: 0, TotalFrames: 300, PlanFrom: 0},
		domain.HandOffJob{JobFence: fence, Segment: 0, Duration: leaseDuration, FramesWritten: checkpoint, CleanBefore: checkpoint},
		domain.ClaimSegment{JobID: job.ID, Segment: 1, Token: token.New(), Now: now, Duration: leaseDuration},
	} {
		if _, err := a.fx.movies.Commit(ctx, id, c); err != nil {
			a.t.Fatalf("%T: %v", c, err)
		}
	}
	m := a.row(id)
	if _, err := a.fx.movies.Commit(ctx, id, domain.FailJob{Job: *m.Lease, Now: now, FramesWritten: checkpoint, Summary: "The trace could not be continued."}); err != nil {
		a.t.Fatalf("fail: %v", err)
	}
}

package tracer_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// continuations records the worker's continuation messages.
type continuations struct {
	mu   sync.Mutex
	jobs []events.TraceJob
}

func (c *continuations) Requeue(context.Context, string, time.Duration) error { return nil }

func (c *continuations) Continue(_ context.Context, job events.TraceJob) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.jobs = append(c.jobs, job)
	return nil
}

func (c *continuations) next() (events.TraceJob, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.jobs) == 0 {
		return events.TraceJob{}, false
	}
	j := c.jobs[0]
	c.jobs = c.jobs[1:]
	return j, true
}

// TestWorkerSegmentsGiveTheSamePointsAsOneRun: the real worker on DynamoDB
// Local hands a trace of the real tracer over from invocation to
// invocation (each lasts at most 11 frames: the tracer then waits to be
// stopped at the invocation's stop margin, 5 s into an 8 s invocation, as
// when a Lambda deadline approaches; nothing here depends on how long a
// frame takes). The
// stored points equal those of one uninterrupted tracer run within 0.01 px.
func TestWorkerSegmentsGiveTheSamePointsAsOneRun(t *testing.T) {
	ctx := context.Background()
	path, s := groundTruthClip(t, "rotate-noise-drift", 50)
	m := clipMovie(t, s, 0, 1)
	m.CleanBefore = 0
	m.Video = &domain.Video{Width: s.Width, Height: s.Height, Codec: "h264"} // as ingested: no probe per segment
	whole, err := collect(t, mustVideo(t, path, nil), m, plan(0, 50, 1))
	if err != nil {
		t.Fatal(err)
	}

	states := &tracer.MemoryStates{}
	video := mustVideo(t, path, states) // checkpoints every 3 frames
	budget := tracer.Func(func(ctx context.Context, m domain.Movie, p domain.TracePlan, emit func(domain.Frame) error) error {
		n := 0
		return video.Trace(ctx, m, p, func(f domain.Frame) error {
			if n == 11 {
				<-ctx.Done() // the worker stops the segment at its stop margin
				return ctx.Err()
			}
			n++
			return emit(f)
		})
	})
	ddb := testenv.DynamoDB(t)
	tables := testenv.NewTables(t, ddb)
	movies, frames := dynamo.NewMovieStore(ddb, tables.Movies), dynamo.NewFrameStore(ddb, tables.Frames)
	js := dynamo.NewJobStore(movies, frames)
	if err := movies.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	jobID := token.New()
	started, err := js.Commit(ctx, m.ID, domain.StartTrace{JobID: jobID, User: domain.User{ID: "u-alice", Name: "Alice"},
		Now: time.Now(), Duration: domain.DefaultLeaseDuration})
	if err != nil {
		t.Fatal(err)
	}
	queue := &continuations{}
	w, err := worker.New(worker.Options{Movies: js, Frames: js, Tracer: budget, Queue: queue,
		StopMargin: 3 * time.Second, StartReserve: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	job := events.TraceJob{MovieID: m.ID, JobID: jobID, Version: started.Version}
	invocations := 0
	for ok := true; ok; job, ok = queue.next() {
		invocations++
		if invocations > 50 {
			t.Fatal("more than 50 invocations")
		}
		body, err := events.EncodeTraceJob(job)
		if err != nil {
			t.Fatal(err)
		}
		ictx, cancel := context.WithTimeout(ctx, 8*time.Second)
		resp, err := w.Handle(ictx, lambdaevents.SQSEvent{Records: []lambdaevents.SQSMessage{{MessageId: token.New(), Body: body,
			ReceiptHandle: "rh", Attributes: map[string]string{"ApproximateReceiveCount": "1"}}}})
		cancel()
		if err != nil || len(resp.BatchItemFailures) != 0 {
			row, _ := movies.Get(ctx, m.ID)
			t.Fatalf("invocation %d: %+v %v; row %+v", invocations, resp, err, row)
		}
	}
	done, err := movies.Get(ctx, m.ID)
	if err != nil || done.Status != domain.StatusTraced || done.Progress.FramesWritten != 50 {
		t.Fatalf("after %d invocations: %+v %v", invocations, done, err)
	}
	if invocations < 4 {
		t.Fatalf("the trace took %d invocations: not split", invocations)
	}
	stored, _, err := frames.Page(ctx, m.ID, 0, 100)
	if err != nil || len(stored) != 50 {
		t.Fatalf("%d frames, %v", len(stored), err)
	}
	for i, f := range stored {
		for k, p := range f.Points {
			q := whole[i].Points[k]
			if f.Index != whole[i].Index || p.Lost != q.Lost || math.Abs(p.PX-q.PX) > 0.01 || math.Abs(p.PY-q.PY) > 0.01 {
				t.Fatalf("frame %d marker %s: %+v after %d invocations, %+v in one run", f.Index, p.MarkerID, p, invocations, q)
			}
		}
	}
	t.Logf("%d invocations, %d checkpoints saved; every point equal to one run's", invocations, states.Len())
}

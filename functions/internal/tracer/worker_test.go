package tracer_test

import (
	"context"
	"math"
	"os"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// TestWorkerTracesARealClip runs the real worker (claim, fenced frame
// writes, completion) with the video tracer on DynamoDB Local, the clip
// read by ffmpeg through a presigned GET from the S3 emulator and the
// checkpoints kept in the same bucket, delivered as an aws-lambda-go SQS
// event; the stored frames are checked against the clip's ground truth.
func TestWorkerTracesARealClip(t *testing.T) {
	ctx := context.Background()
	path, s := groundTruthClip(t, "fast-blur", 60)

	s3c := testenv.S3(t)
	bucket := "tracer-" + token.New()[:12]
	if err := s3store.CreateBucket(ctx, s3c, bucket, "", ""); err != nil {
		t.Fatal(err)
	}
	store, err := s3store.New(s3store.Options{Client: s3c, Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, "uploads/clip-1", "video/mp4", data); err != nil {
		t.Fatal(err)
	}
	source := tracer.SourceFunc(func(ctx context.Context, m domain.Movie) (string, error) {
		return store.PresignGet(ctx, "uploads/"+m.ID, 15*time.Minute)
	})
	states := tracer.ObjectStates{Store: store, Prefix: "tracker/", NotFound: s3store.ErrNotFound}
	vt, err := tracer.NewVideo(tracer.VideoOptions{Source: source, States: states, CheckpointEvery: 20})
	if err != nil {
		t.Fatal(err)
	}

	ddb := testenv.DynamoDB(t)
	tables := testenv.NewTables(t, ddb)
	movies, frames := dynamo.NewMovieStore(ddb, tables.Movies), dynamo.NewFrameStore(ddb, tables.Frames)
	js := dynamo.NewJobStore(movies, frames)
	m := clipMovie(t, s, 0, 1)
	m.CleanBefore = 0
	if err := movies.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	jobID := token.New()
	started, err := js.Commit(ctx, m.ID, domain.StartTrace{JobID: jobID, User: domain.User{ID: "u-alice", Name: "Alice"},
		Now: time.Now(), Duration: domain.DefaultLeaseDuration})
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(worker.Options{Movies: js, Frames: js, Tracer: vt})
	if err != nil {
		t.Fatal(err)
	}
	body, err := events.EncodeTraceJob(events.TraceJob{MovieID: m.ID, JobID: jobID, Version: started.Version})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := w.Handle(ctx, lambdaevents.SQSEvent{Records: []lambdaevents.SQSMessage{{MessageId: "msg-1", Body: body,
		ReceiptHandle: "rh-1", Attributes: map[string]string{"ApproximateReceiveCount": "1"}}}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v %v", resp, err)
	}
	done, err := movies.Get(ctx, m.ID)
	if err != nil || done.Status != domain.StatusTraced || done.Progress.FramesWritten != 60 {
		t.Fatalf("row after the trace: %+v %v", done, err)
	}
	stored, next, err := frames.Page(ctx, m.ID, 0, 100)
	if err != nil || next != nil || len(stored) != 60 {
		t.Fatalf("%d frames, next %v, %v", len(stored), next, err)
	}
	var sum, worst float64
	n := 0
	for _, f := range stored {
		truth := s.Truth(f.Index)
		for k, p := range f.Points {
			if p.Lost {
				t.Fatalf("frame %d: marker %s lost (confidence %.2f)", f.Index, p.MarkerID, p.Confidence)
			}
			e := math.Hypot(p.PX-(truth[k].X+0.5), p.PY-(truth[k].Y+0.5))
			sum += e
			worst = max(worst, e)
			n++
		}
	}
	if mean := sum / float64(n); mean > 0.3 || worst > 2 {
		t.Fatalf("error against the ground truth: mean %.3f px, worst %.3f px", mean, worst)
	} else {
		t.Logf("%d points, mean error %.3f px, worst %.3f px (12 px/frame with motion blur, H.264)", n, mean, worst)
	}
}

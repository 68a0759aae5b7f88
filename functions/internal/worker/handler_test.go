package worker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

// TestRequeueDelayGrowsWithTheReceiveCount: a message left for redelivery
// (here: its claim failed in transport) is made visible again after the
// default delay for its receive count: 2 s per receive, at most 30 s; a
// missing or garbled count counts as the first receive.
func TestRequeueDelayGrowsWithTheReceiveCount(t *testing.T) {
	for _, c := range []struct {
		count string
		want  time.Duration
	}{
		{"1", 2 * time.Second}, {"2", 4 * time.Second}, {"3", 6 * time.Second}, {"14", 28 * time.Second},
		{"15", 30 * time.Second}, {"16", 30 * time.Second}, {"1000", 30 * time.Second},
		{"", 2 * time.Second}, {"0", 2 * time.Second}, {"soon", 2 * time.Second},
	} {
		count, want := c.count, c.want
		t.Run("count="+count, func(t *testing.T) {
			e := newMemEnv(t)
			e.createMovie("mq", 300)
			msg := message(t, "msg-q", e.start("mq", alice, 0, e.now(), lease))
			msg.Attributes["ApproximateReceiveCount"] = count
			q := &memQueue{}
			tw := e.newWorker(tracer.NewSynthetic(), lease, func(o *worker.Options) { o.Queue = q })
			tw.movies.fail = func(cmd domain.Command) error {
				if _, ok := cmd.(domain.ClaimSegment); ok {
					return errors.New("connection reset by peer")
				}
				return nil
			}
			resp, err := tw.Handle(context.Background(), lambdaevents.SQSEvent{Records: []lambdaMessage{msg}})
			if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != msg.MessageId {
				t.Fatalf("%+v %v", resp, err)
			}
			if got := q.requeues(); len(got) != 1 || got[0] != (requeue{msg.ReceiptHandle, want}) {
				t.Fatalf("requeued %+v, want %s after %v", got, msg.ReceiptHandle, want)
			}
		})
	}
}

// TestAbandonedJobIsNotRedelivered: a claimed job whose invocation ends
// before any terminal write (abandoned) is reported done to SQS and not
// requeued: its redelivery could only be refused by its own claim. The
// lease is left to go stale.
func TestAbandonedJobIsNotRedelivered(t *testing.T) {
	e := newMemEnv(t)
	e.createMovie("ma", 300)
	job := e.start("ma", alice, 0, e.now(), lease)
	msg := message(t, "msg-a", job)
	crashCtx, crash := context.WithCancel(context.Background())
	defer crash()
	q := &memQueue{}
	var tw *testWorker
	tw = e.newWorker(at(150, func(_ context.Context, f domain.Frame, emit func(domain.Frame) error) error {
		if !waitUntil(func() bool { return tw.putsWritten() > 0 }) {
			return errTimedOut
		}
		crash()
		return emit(f)
	}), lease, func(o *worker.Options) { o.Queue = q })
	resp, err := tw.Handle(crashCtx, lambdaevents.SQSEvent{Records: []lambdaMessage{msg}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("an abandoned job's message was left for redelivery: %+v %v", resp, err)
	}
	if got := q.requeues(); len(got) != 0 {
		t.Fatalf("requeued %+v", got)
	}
	if m := e.get("ma"); m.Status != domain.StatusTracing || m.Lease == nil || !m.Lease.Claimed || m.Lease.ID != job.JobID {
		t.Fatalf("row %+v", m)
	}
}

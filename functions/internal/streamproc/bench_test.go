package streamproc_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/schema"
)

// thousandRecords commits, through the API's store, 40 movies each traced
// four times (open Analyze, start, claim, begin, renew, then complete or,
// every fourth job, fail): 1,000 real stream records with 160 trace starts
// and 320 audit events.
func thousandRecords(e *env) []lambdaevents.DynamoDBEventRecord {
	e.tb.Helper()
	for mv := range 40 {
		id := fmt.Sprintf("bench-%02d", mv)
		e.createMovie(id, t0)
		at := t0
		for j := range 4 {
			a, job := newID(), newID()
			e.apply(id, domain.OpenAnalysis{LeaseID: a, User: alice, Now: at, Duration: lease})
			e.apply(id, domain.StartTrace{LeaseID: a, JobID: job, User: alice, FromFrame: 0, Now: at.Add(time.Minute), Duration: lease})
			claimed := e.apply(id, domain.ClaimSegment{JobID: job, Now: at.Add(2 * time.Minute), Duration: lease})
			fence := domain.JobFence{JobID: job, Now: at.Add(3 * time.Minute)}
			e.apply(id, domain.BeginTrace{JobFence: fence, Duration: lease, TotalFrames: 300})
			fence.Now = at.Add(4 * time.Minute)
			e.apply(id, domain.RenewJob{JobFence: fence, Duration: lease, FramesWritten: 150})
			if j == 3 {
				e.apply(id, domain.FailJob{Job: *claimed.Lease, Now: at.Add(5 * time.Minute), FramesWritten: 150, Summary: hostileFailure})
			} else {
				e.apply(id, domain.CompleteJob{Job: *claimed.Lease, Now: at.Add(5 * time.Minute), FramesWritten: 300})
			}
			at = at.Add(time.Hour)
		}
	}
	recs := e.read()
	if len(recs) != 1000 {
		e.tb.Fatalf("%d records, want 1000", len(recs))
	}
	return recs
}

// BenchmarkReplay1000 replays 1,000 recorded stream records through the
// handler against DynamoDB Local and the SQS emulator, into a fresh audit
// table and queue each time, as invocations of batch= records (the event
// source mapping's BatchSize), and reports requests per effect:
//
//	make test PKGS=./functions/internal/streamproc TEST_FLAGS='-run ^$ -bench Replay1000 -benchtime 5x'
func BenchmarkReplay1000(b *testing.B) {
	e := newEnv(b)
	recs := thousandRecords(e)
	starts, audits := 0, 0
	for _, r := range recs {
		c, err := schema.DecodeRecord(r)
		if err != nil {
			b.Fatal(err)
		}
		for _, ev := range events.Derive(c.Old, c.New) {
			audits++
			if ev.Type == events.TracingStarted {
				starts++
			}
		}
	}
	for _, size := range []int{1000, 100} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			var sqsRequests, ddbWrites int
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e.newAuditTable()
				e.queueURL = e.newQueue()
				h := e.newHandler(e.sqs, e.ddb)
				e.counter.Reset()
				b.StartTimer()
				began := time.Now()
				for s := 0; s < len(recs); s += size {
					resp, err := h.Handle(context.Background(), lambdaevents.DynamoDBEvent{Records: recs[s:min(s+size, len(recs))]})
					if err != nil || len(resp.BatchItemFailures) != 0 {
						b.Fatalf("batch at %d: %+v %v", s, resp, err)
					}
				}
				elapsed += time.Since(began)
				b.StopTimer()
				sqsRequests += e.counter.Of("SendMessageBatch")
				ddbWrites += e.counter.Of("TransactWriteItems") + e.counter.Of("BatchWriteItem") + e.counter.Of("PutItem")
				if n := len(e.rawAudit()); n != audits {
					b.Fatalf("%d audit items, want %d", n, audits)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(sqsRequests)/float64(b.N*starts), "sqs-requests/start")
			b.ReportMetric(float64(ddbWrites)/float64(b.N*audits), "ddb-writes/audit-event")
			b.ReportMetric(float64(b.N*len(recs))/elapsed.Seconds(), "records/s")
		})
	}
}

package stack

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// TestShortInvocationsCompleteALongTrace (issue 12, item 4): with 3-second
// worker invocations, a 240-frame trace at 30 ms a frame (over 7 s of
// tracing) completes through continuations: every frame once, by the job,
// and the worker logged its hand-offs.
func TestShortInvocationsCompleteALongTrace(t *testing.T) {
	if handoffs, _ := traceInSegments(t, 30*time.Millisecond, 100*time.Millisecond, 3*time.Second, 60*time.Second); handoffs < 2 {
		t.Fatalf("%d hand-offs: the trace did not span invocations", handoffs)
	}
}

// traceInSegments traces the 240-frame sample on a stack whose synthetic
// tracer takes delay a frame and whose worker invocations last invocation,
// waits (at most within) until it is traced, and checks that the job wrote
// every frame once, in order. It returns the worker's hand-offs (logged
// "segment handed off") and the time from start to traced.
func traceInSegments(t *testing.T, delay, progressEvery, invocation, within time.Duration) (handoffs int, took time.Duration) {
	t.Helper()
	logs := &testenv.LogBuffer{}
	s := startTestStack(t, Options{
		Tracer: tracer.NewSynthetic(tracer.WithDelay(delay)), LeaseDuration: time.Minute, ProgressEvery: progressEvery,
		WorkerInvocation: invocation, Log: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	alice := client{t: t, base: s.URL, user: "dev-alice", name: "Alice"}
	const mp = "/movies/zebrafish-larva" // 240 frames, one marker
	lease := alice.want(201, "", "POST", mp+"/analysis-lease", nil).json(t)["leaseId"].(string)
	job := alice.want(202, "", "POST", mp+"/traces", map[string]int{"fromFrame": 0}, "Lease-Id", lease).json(t)["jobId"].(string)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	started := time.Now()
	done := waitStatusWithin(t, alice, mp, "traced", within)
	took = time.Since(started)
	if j := done["lastJob"].(map[string]any); j["jobId"] != job || j["frames"] != 240.0 {
		t.Fatalf("last job %v", j)
	}
	page := alice.want(200, "", "GET", mp+"/frames?from=0&limit=1000", nil).json(t)
	frames := page["frames"].([]any)
	if len(frames) != 240 {
		t.Fatalf("%d frames", len(frames))
	}
	for i, f := range frames {
		if fm := f.(map[string]any); fm["frame"] != float64(i) {
			t.Fatalf("frame %d is %v", i, fm["frame"])
		}
	}
	return strings.Count(logs.String(), `"msg":"segment handed off"`), took
}

func waitStatusWithin(t *testing.T, c client, path, status string, within time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		m := c.want(200, "", "GET", path, nil).json(t)
		if m["status"] == status {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never became %s: %v", path, status, m)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSweeperFinalisesAStaleTrace (issue 12, item 10): a claimed trace whose
// worker died (its lease went stale, nobody retraced) is finalised by the
// local sweeper goroutine: the stored row reads tracing_failed with the
// stalled summary, and the stream processor projects its
// movie.tracing.failed audit item, once.
func TestSweeperFinalisesAStaleTrace(t *testing.T) {
	s := startTestStack(t, Options{SweepEvery: 200 * time.Millisecond, LeaseDuration: time.Minute})
	ctx := t.Context()
	const id = "zebrafish-larva"
	const job = "0123456789abcdef0123456789abcdef"
	past := time.Now().Add(-time.Hour)
	for _, c := range []domain.Command{
		domain.StartTrace{JobID: job, User: domain.User{ID: "dev-alice", Name: "Alice"}, Now: past, Duration: time.Minute},
		domain.ClaimSegment{JobID: job, Now: past, Duration: time.Minute}, // a worker claimed it and died
	} {
		if _, err := s.Movies.Commit(ctx, id, c); err != nil {
			t.Fatalf("%T: %v", c, err)
		}
	}
	alice := client{t: t, base: s.URL, user: "dev-alice", name: "Alice"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, err := s.Movies.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status == domain.StatusFailed && m.Lease == nil {
			if m.LastJob.JobID != job || m.LastJob.FailureSummary != domain.StalledSummary {
				t.Fatalf("last job %+v", m.LastJob)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweeper never finalised the stale trace: %+v", m)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v := alice.want(200, "", "GET", "/movies/"+id, nil).json(t); v["status"] != "tracing_failed" {
		t.Fatalf("view %v", v)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out, err := s.DynamoDB.Scan(ctx, &dynamodb.ScanInput{TableName: &s.Tables.Audit})
		if err != nil {
			t.Fatal(err)
		}
		var audit []struct {
			Type  string `dynamodbav:"type"`
			JobID string `dynamodbav:"jobId"`
		}
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &audit); err != nil {
			t.Fatal(err)
		}
		failed := 0
		for _, a := range audit {
			if a.JobID == job && a.Type == "movie.tracing.failed" {
				failed++
			}
		}
		if failed == 1 {
			return
		}
		if failed > 1 || time.Now().After(deadline) {
			t.Fatalf("%d movie.tracing.failed items for the job: %+v", failed, audit)
		}
	}
}

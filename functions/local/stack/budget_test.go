package stack

import (
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/proof"
	"github.com/movietrace/tracinglocks/functions/internal/testenv"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
)

// TestTwoSecondInvocationsCompleteAThirtySecondTrace (issue 12 item 4, the
// literal case, on the real local stack): worker invocations of 2 s (as
// WORKER_INVOCATION_SECONDS=2 gives make run, margins scaled by
// worker.MarginsFor) complete a trace of 30 s (240 frames at 125 ms):
// every frame once, in order, by the job, through many hand-offs. It takes
// over 30 s, so it runs in make proof (PROOF_BUDGET_TRACE set); make test
// has the fake-clock version in the worker package.
func TestTwoSecondInvocationsCompleteAThirtySecondTrace(t *testing.T) {
	if os.Getenv(envvar.ProofBudgetTrace) == "" {
		t.Skipf("takes over 30 s: set %s (make proof does)", envvar.ProofBudgetTrace)
	}
	logs := &testenv.LogBuffer{}
	s := startTestStack(t, Options{
		Tracer: tracer.NewSynthetic(tracer.WithDelay(125 * time.Millisecond)), LeaseDuration: time.Minute, ProgressEvery: 500 * time.Millisecond,
		WorkerInvocation: 2 * time.Second, Log: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
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
	done := waitStatusWithin(t, alice, mp, "traced", 5*time.Minute)
	took := time.Since(started)
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
	handoffs := strings.Count(logs.String(), `"msg":"segment handed off"`)
	if handoffs < 15 { // 30 s of tracing in invocations of at most 2 s
		t.Fatalf("%d hand-offs: 30 s of tracing cannot fit in fewer than 15 invocations of 2 s", handoffs)
	}
	t.Logf("a 30 s trace in 2 s invocations: %d invocations, %v from start to traced", handoffs+1, took.Round(time.Second))
	if err := proof.AppendCounts("budget_trace_invocations", handoffs+1); err != nil {
		t.Fatal(err)
	}
}

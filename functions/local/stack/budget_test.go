package stack

import (
	"os"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/testkit/proof"
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
	handoffs, took := traceInSegments(t, 125*time.Millisecond, 500*time.Millisecond, 2*time.Second, 5*time.Minute)
	if handoffs < 15 { // 30 s of tracing in invocations of at most 2 s
		t.Fatalf("%d hand-offs: 30 s of tracing cannot fit in fewer than 15 invocations of 2 s", handoffs)
	}
	t.Logf("a 30 s trace in 2 s invocations: %d invocations, %v from start to traced", handoffs+1, took.Round(time.Second))
	if err := proof.AppendCounts("budget_trace_invocations", handoffs+1); err != nil {
		t.Fatal(err)
	}
}

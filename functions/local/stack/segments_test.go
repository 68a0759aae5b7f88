package stack

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/testenv"
)

// TestShortInvocationsCompleteALongTrace (issue 12, item 4): with 3-second
// worker invocations, a 240-frame trace at 30 ms a frame (over 7 s of
// tracing) completes through continuations: every frame once, by the job,
// and the worker logged its hand-offs.
func TestShortInvocationsCompleteALongTrace(t *testing.T) {
	logs := &testenv.LogBuffer{}
	s := startTestStack(t, Options{
		FrameDelay: 30 * time.Millisecond, LeaseDuration: time.Minute, ProgressEvery: 100 * time.Millisecond,
		WorkerInvocation: 3 * time.Second, Log: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
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
	done := waitStatusWithin(t, alice, mp, "traced", 60*time.Second)
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
	if n := strings.Count(logs.String(), `"msg":"segment handed off"`); n < 2 {
		t.Fatalf("%d hand-offs: the trace did not span invocations", n)
	}
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

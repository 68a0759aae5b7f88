package worker_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

// BenchmarkTrace10000Frames traces a 10,000-frame movie with four markers
// through the worker against DynamoDB Local, and reports the DynamoDB
// requests per frame written (every attempt counts; the goal is <= 0.05)
// and frames written per second of the job's wall time (ns/op is one
// 10,000-frame job). "fresh" traces a movie with no stored frames;
// "retrace" traces one whose 10,000 frames must all be cleared first.
// Setup (movie, StartTrace, the first trace of "retrace") is not counted.
//
//	go test -run '^$' -bench Trace10000Frames -benchtime 3x ./functions/internal/worker
func BenchmarkTrace10000Frames(b *testing.B) {
	const n = 10_000
	e := newEnv(b)
	ctx := context.Background()
	w := e.newWorker(tracer.NewSynthetic(), lease)
	seq := 0
	movie := func() string {
		seq++
		id := fmt.Sprintf("bench-%d", seq)
		m, err := domain.NewMovie(id, "Bench", n, 25, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		for k := range 4 {
			m.Settings.Markers = append(m.Settings.Markers, domain.Marker{ID: fmt.Sprint("marker-", k), X: 0.2 * float64(k+1), Y: 0.5})
		}
		if err := e.movies.Create(ctx, m); err != nil {
			b.Fatal(err)
		}
		return id
	}
	trace := func(b *testing.B, id string) worker.Outcome {
		out := w.Run(ctx, e.start(id, alice, 0, time.Now(), lease))
		if out.Result != worker.ResultTraced || out.FramesWritten != n {
			b.Fatalf("%+v", out)
		}
		return out
	}
	for _, mode := range []string{"fresh", "retrace"} {
		b.Run(mode, func(b *testing.B) {
			requests, frames := 0, 0
			var took time.Duration
			ops := map[string]int{}
			for range b.N {
				b.StopTimer()
				id := movie()
				if mode == "retrace" {
					trace(b, id)
				}
				job := e.start(id, alice, 0, time.Now(), lease)
				before := e.counter.Snapshot()
				start := time.Now()
				b.StartTimer()
				out := w.Run(ctx, job)
				b.StopTimer()
				took += time.Since(start)
				if out.Result != worker.ResultTraced || out.FramesWritten != n {
					b.Fatalf("%+v", out)
				}
				frames += out.FramesWritten
				for op, c := range e.counter.Snapshot() {
					ops[op] += c - before[op]
					requests += c - before[op]
				}
			}
			b.ReportMetric(float64(requests)/float64(frames), "ddb-requests/frame")
			b.ReportMetric(float64(frames)/took.Seconds(), "frames/s")
			var parts []string
			for _, op := range slices.Sorted(maps.Keys(ops)) {
				parts = append(parts, fmt.Sprintf("%s=%.1f", op, float64(ops[op])/float64(b.N)))
			}
			b.Logf("requests per %d-frame job: %s", n, strings.Join(parts, " "))
		})
	}
}

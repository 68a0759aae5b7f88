package worker_test

import (
	"context"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
)

// TestFencedWriteTouchesAFrameOnce is the Frames port's contract, on the
// in-memory double and on DynamoDB Local through the real adapter alike: a
// fenced write that names one frame twice (put and delete, or two puts) is
// an error that is no refusal, and writes nothing; the same frames in
// separate writes land.
func TestFencedWriteTouchesAFrameOnce(t *testing.T) {
	for name, newStoreEnv := range map[string]func(testing.TB) *env{"memory": newMemEnv, "dynamodb": newEnv} {
		t.Run(name, func(t *testing.T) {
			e := newStoreEnv(t)
			e.createMovie("mp", 10)
			job := e.start("mp", alice, 0, e.now(), lease)
			ctx := context.Background()
			if _, err := e.store.Commit(ctx, "mp", domain.ClaimSegment{JobID: job.JobID, Now: e.now(), Duration: lease}); err != nil {
				t.Fatal(err)
			}
			fence := domain.JobFence{JobID: job.JobID, Now: e.now()}
			frame := func(i int) domain.Frame {
				return domain.Frame{Index: i, JobID: job.JobID, Points: []domain.Point{{MarkerID: "tip", X: 0.5, Y: 0.5}}}
			}
			for what, c := range map[string]struct {
				puts    []domain.Frame
				deletes []int
			}{
				"put and delete": {[]domain.Frame{frame(1), frame(3)}, []int{3}},
				"two puts":       {[]domain.Frame{frame(3), frame(3)}, nil},
				"two deletes":    {nil, []int{3, 3}},
			} {
				err := e.store.WriteFenced(ctx, "mp", fence, c.puts, c.deletes)
				if err == nil || domain.ErrorCode(err) != "" {
					t.Fatalf("%s of frame 3 in one write: %v, want an error that is no refusal", what, err)
				}
			}
			if got := e.stored("mp"); len(got) != 0 {
				t.Fatalf("refused writes stored %+v", got)
			}
			if err := e.store.WriteFenced(ctx, "mp", fence, []domain.Frame{frame(1), frame(3)}, nil); err != nil {
				t.Fatal(err)
			}
			if err := e.store.WriteFenced(ctx, "mp", fence, nil, []int{3}); err != nil {
				t.Fatal(err)
			}
			if got := e.stored("mp"); len(got) != 1 || got[0].Index != 1 {
				t.Fatalf("stored %+v, want frame 1 only", got)
			}
		})
	}
}

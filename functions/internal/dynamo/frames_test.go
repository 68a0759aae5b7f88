package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
)

// claimedJob starts and claims a trace of a new movie and returns the job ID.
func claimedJob(tb testing.TB, s *dynamo.MovieStore, id string) string {
	tb.Helper()
	createMovie(tb, s, id)
	job := newID(tb)
	apply(tb, s, id, domain.StartTrace{JobID: job, User: alice, FromFrame: 0, Now: t0, Duration: lease})
	apply(tb, s, id, domain.ClaimSegment{JobID: job, Now: t0, Duration: lease})
	return job
}

func frameOf(job string, i int) domain.Frame {
	return domain.Frame{Index: i, JobID: job, Points: []domain.Point{{MarkerID: "m1", X: float64(i%100) / 100, Y: 0.5}}}
}

func framesOf(job string, idx ...int) []domain.Frame {
	out := make([]domain.Frame, len(idx))
	for i, n := range idx {
		out[i] = frameOf(job, n)
	}
	return out
}

func fenceCheck(tb testing.TB, s *dynamo.MovieStore, id string, f domain.JobFence) types.TransactWriteItem {
	tb.Helper()
	fc, err := s.FenceCheck(id, f)
	if err != nil {
		tb.Fatal(err)
	}
	return fc
}

func TestFramesFencedWritesKeysAndPages(t *testing.T) {
	s, client, tables := newStore(t)
	frames := dynamo.NewFrameStore(client, tables.Frames)
	ctx := context.Background()
	job := claimedJob(t, s, "f1")
	f := domain.JobFence{JobID: job, Now: t0.Add(time.Second)}

	// 0, 2, ..., 258: a transaction of 99 puts and one of 31.
	var all []int
	for i := 0; i < 260; i += 2 {
		all = append(all, i)
	}
	for _, chunk := range [][]int{all[:dynamo.MaxFencedWrites], all[dynamo.MaxFencedWrites:]} {
		if err := frames.WriteFenced(ctx, "f1", fenceCheck(t, s, "f1", f), framesOf(job, chunk...), nil); err != nil {
			t.Fatalf("write %d frames: %v", len(chunk), err)
		}
	}
	keys, err := frames.Keys(ctx, "f1", 0)
	if err != nil || !slices.Equal(keys, all) {
		t.Fatalf("keys %v %v", keys, err)
	}
	keys, err = frames.Keys(ctx, "f1", 101)
	if err != nil || !slices.Equal(keys, all[51:]) {
		t.Fatalf("keys from 101: %v %v", keys, err)
	}

	t.Run("pages walk every frame once, in order, and end with nil", func(t *testing.T) {
		var got []int
		from := 0
		for pages := 0; ; pages++ {
			page, next, err := frames.Page(ctx, "f1", from, 40)
			if err != nil {
				t.Fatal(err)
			}
			if pages > 10 {
				t.Fatal("pages do not end")
			}
			for _, fr := range page {
				got = append(got, fr.Index)
				if !reflect.DeepEqual(fr, frameOf(job, fr.Index)) {
					t.Fatalf("frame %+v", fr)
				}
			}
			if next == nil {
				break
			}
			from = *next
		}
		if !slices.Equal(got, all) {
			t.Fatalf("paged %v", got)
		}
		// Exactly the remaining frames: no empty trailing page.
		page, next, err := frames.Page(ctx, "f1", 258-2*9, 10)
		if err != nil || len(page) != 10 || next != nil {
			t.Fatalf("last page %d frames, next %v, %v", len(page), next, err)
		}
		if page, next, err := frames.Page(ctx, "f1", 259, 10); err != nil || len(page) != 0 || next != nil {
			t.Fatalf("past the end: %v %v %v", page, next, err)
		}
		if page, next, err := frames.Page(ctx, "other", 0, 10); err != nil || len(page) != 0 || next != nil {
			t.Fatalf("another movie: %v %v %v", page, next, err)
		}
	})

	t.Run("puts and deletes share one transaction", func(t *testing.T) {
		if err := frames.WriteFenced(ctx, "f1", fenceCheck(t, s, "f1", f), framesOf(job, 1, 3), []int{0, 2, 500}); err != nil {
			t.Fatal(err)
		}
		keys, _ := frames.Keys(ctx, "f1", 0)
		if !slices.Equal(keys[:4], []int{1, 3, 4, 6}) || len(keys) != len(all) {
			t.Fatalf("keys %v", keys)
		}
	})

	t.Run("a lost lease writes nothing and maps to lease_lost", func(t *testing.T) {
		before, _ := frames.Keys(ctx, "f1", 0)
		for name, fence := range map[string]domain.JobFence{
			"another job": {JobID: newID(t), Now: f.Now},
			"stale":       {JobID: job, Now: t0.Add(lease)},
		} {
			err := frames.WriteFenced(ctx, "f1", fenceCheck(t, s, "f1", fence), framesOf(job, 1000, 1001), []int{1})
			if err == nil {
				t.Fatalf("%s: written", name)
			}
			if dynamo.IsTransactionConflict(err) {
				t.Errorf("%s: a refused fence reads as a conflict", name)
			}
			if code := domain.ErrorCode(dynamo.FenceRefusal(err, fence)); code != domain.CodeLeaseLost {
				t.Errorf("%s: refusal %q from %v", name, code, err)
			}
		}
		after, _ := frames.Keys(ctx, "f1", 0)
		if !slices.Equal(before, after) {
			t.Fatalf("a refused write changed the frames: %v -> %v", before, after)
		}
	})

	t.Run("unclaimed jobs are fenced out", func(t *testing.T) {
		createMovie(t, s, "f2")
		j := newID(t)
		apply(t, s, "f2", domain.StartTrace{JobID: j, User: alice, FromFrame: 0, Now: t0, Duration: lease})
		fence := domain.JobFence{JobID: j, Now: t0}
		err := frames.WriteFenced(ctx, "f2", fenceCheck(t, s, "f2", fence), framesOf(j, 0), nil)
		if domain.ErrorCode(dynamo.FenceRefusal(err, fence)) != domain.CodeLeaseLost {
			t.Fatalf("unclaimed job wrote: %v", err)
		}
	})
}

func TestWriteFencedRejectsBadBatches(t *testing.T) {
	s, client, tables := newStore(t)
	// A bad batch is refused before any request: DynamoDB would refuse
	// most of them too, but the store's own checks are what is tested.
	sent := &countingFrameAPI{FrameAPI: client}
	frames := dynamo.NewFrameStore(sent, tables.Frames)
	ctx := context.Background()
	job := claimedJob(t, s, "f3")
	fc := fenceCheck(t, s, "f3", domain.JobFence{JobID: job, Now: t0})
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i
	}
	for name, c := range map[string]struct {
		fence   types.TransactWriteItem
		puts    []domain.Frame
		deletes []int
	}{
		"nothing":          {fc, nil, nil},
		"100 writes":       {fc, nil, hundred},
		"no fence":         {types.TransactWriteItem{}, framesOf(job, 1), nil},
		"a put as fence":   {types.TransactWriteItem{Put: &types.Put{}}, framesOf(job, 1), nil},
		"frame twice":      {fc, framesOf(job, 1, 1), nil},
		"put and delete":   {fc, framesOf(job, 1), []int{1}},
		"negative delete":  {fc, nil, []int{-1}},
		"invalid frame":    {fc, []domain.Frame{{Index: 1, JobID: "x"}}, nil},
		"point off screen": {fc, []domain.Frame{{Index: 1, JobID: job, Points: []domain.Point{{MarkerID: "m", X: 2}}}}, nil},
	} {
		if err := frames.WriteFenced(ctx, "f3", c.fence, c.puts, c.deletes); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if n := sent.transactions.Swap(0); n != 0 {
			t.Errorf("%s: %d transactions sent for a batch the store must refuse itself", name, n)
		}
	}
	if keys, err := frames.Keys(ctx, "f3", 0); err != nil || len(keys) != 0 {
		t.Fatalf("rejected batches wrote %v %v", keys, err)
	}
	if err := frames.WriteFenced(ctx, "../x", fc, framesOf(job, 1), nil); err == nil {
		t.Error("malformed movie ID accepted")
	}
	if _, _, err := frames.Page(ctx, "f3", 0, 0); err == nil {
		t.Error("limit 0 accepted")
	}
	if _, _, err := frames.Page(ctx, "f3", 0, dynamo.MaxFramePage+1); err == nil {
		t.Error("limit above the maximum accepted")
	}
	if _, err := frames.Keys(ctx, "f3", -1); err == nil {
		t.Error("negative from accepted")
	}
}

// TestFramePageCutByResponseSize: large frames (32 points each) overflow
// DynamoDB's 1 MB Query page before the limit; next still resumes exactly.
func TestFramePageCutByResponseSize(t *testing.T) {
	s, client, tables := newStore(t)
	frames := dynamo.NewFrameStore(client, tables.Frames)
	ctx := context.Background()
	job := claimedJob(t, s, "f4")
	f := domain.JobFence{JobID: job, Now: t0}
	big := func(i int) domain.Frame {
		fr := domain.Frame{Index: i, JobID: job}
		for k := range domain.MaxMarkers {
			fr.Points = append(fr.Points, domain.Point{MarkerID: fmt.Sprintf("marker-%s-%02d", strings.Repeat("x", 48), k), X: 0.123456789, Y: 0.987654321})
		}
		return fr
	}
	const n = 500
	for start := 0; start < n; start += dynamo.MaxFencedWrites {
		var batch []domain.Frame
		for i := start; i < min(n, start+dynamo.MaxFencedWrites); i++ {
			batch = append(batch, big(i))
		}
		if err := frames.WriteFenced(ctx, "f4", fenceCheck(t, s, "f4", f), batch, nil); err != nil {
			t.Fatal(err)
		}
	}
	seen, from, pages, short := 0, 0, 0, false
	for {
		page, next, err := frames.Page(ctx, "f4", from, dynamo.MaxFramePage)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, fr := range page {
			if fr.Index != seen {
				t.Fatalf("frame %d, want %d", fr.Index, seen)
			}
			seen++
		}
		if next == nil {
			break
		}
		if len(page) < dynamo.MaxFramePage {
			short = true
		}
		from = *next
	}
	if seen != n || pages < 2 || !short {
		t.Fatalf("saw %d frames in %d pages (short page: %v)", seen, pages, short)
	}
}

func TestIsTransactionConflict(t *testing.T) {
	reasons := func(codes ...string) error {
		var rs []types.CancellationReason
		for _, c := range codes {
			rs = append(rs, types.CancellationReason{Code: aws.String(c)})
		}
		return fmt.Errorf("wrapped: %w", &types.TransactionCanceledException{CancellationReasons: rs})
	}
	for err, want := range map[error]bool{
		reasons("None", "TransactionConflict", "None"):           true,
		reasons("TransactionConflict"):                           true,
		reasons("ConditionalCheckFailed", "None"):                false,
		reasons("ConditionalCheckFailed", "TransactionConflict"): false,
		reasons("None", "ValidationError"):                       false,
		reasons():                                                false,
		&types.TransactionConflictException{}:                    true,
		errors.New("TransactionConflict"):                        false,
	} {
		if got := dynamo.IsTransactionConflict(err); got != want {
			t.Errorf("%v: %v, want %v", err, got, want)
		}
	}
}

// countingFrameAPI counts the transactions a frame store sends.
type countingFrameAPI struct {
	dynamo.FrameAPI
	transactions atomic.Int64
}

func (c *countingFrameAPI) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.transactions.Add(1)
	return c.FrameAPI.TransactWriteItems(ctx, in, opts...)
}

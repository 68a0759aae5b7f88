package retry

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

func TestCeilingDoublesThenCaps(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{{0, 50 * time.Millisecond}, {1, 50 * time.Millisecond}, {2, 100 * time.Millisecond}, {3, 200 * time.Millisecond},
		{5, 800 * time.Millisecond}, {6, time.Second}, {64, time.Second}, {math.MaxInt, time.Second}} {
		if got := ceiling(tc.n, Base, Cap); got != tc.want {
			t.Errorf("ceiling(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
	if got := ceiling(3, time.Duration(math.MaxInt64/2+1), time.Duration(math.MaxInt64)); got != time.Duration(math.MaxInt64) {
		t.Errorf("no overflow: %v", got)
	}
	if got := Delay(3, 0, time.Second); got != time.Millisecond {
		t.Errorf("zero base: %v", got)
	}
	if got := Delay(3, time.Second, -1); got != time.Millisecond {
		t.Errorf("negative cap: %v", got)
	}
}

var errConflict = errors.New("conflict")

func TestDoRetriesOnlyRetryableErrorsAndStops(t *testing.T) {
	var pauses []time.Duration
	p := Policy{Attempts: 4, Delay: func(n int) time.Duration { return time.Duration(n) }, Sleep: func(_ context.Context, d time.Duration) error {
		pauses = append(pauses, d)
		return nil
	}}
	isConflict := func(err error) bool { return errors.Is(err, errConflict) }

	calls := 0
	err := p.Do(context.Background(), isConflict, func() error { calls++; return errConflict })
	if !errors.Is(err, errConflict) || calls != 4 || len(pauses) != 3 || pauses[0] != 1 || pauses[2] != 3 {
		t.Fatalf("always conflicting: err %v, %d calls, pauses %v", err, calls, pauses)
	}

	calls, pauses = 0, nil
	err = p.Do(context.Background(), isConflict, func() error {
		calls++
		if calls < 3 {
			return errConflict
		}
		return nil
	})
	if err != nil || calls != 3 || len(pauses) != 2 {
		t.Fatalf("conflict twice: err %v, %d calls", err, calls)
	}

	calls = 0
	other := errors.New("refused")
	if err := p.Do(context.Background(), isConflict, func() error { calls++; return other }); err != other || calls != 1 {
		t.Fatalf("not retryable: err %v, %d calls", err, calls)
	}

	calls = 0
	if err := (Policy{}).Do(context.Background(), isConflict, func() error { calls++; return errConflict }); calls != 1 || !errors.Is(err, errConflict) {
		t.Fatalf("zero policy tries once: %d calls, %v", calls, err)
	}
}

func TestDoStopsWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	err := Default.Do(ctx, func(error) bool { return true }, func() error { calls++; return errConflict })
	if calls != 1 || !errors.Is(err, context.Canceled) || !errors.Is(err, errConflict) {
		t.Fatalf("%d calls, %v", calls, err)
	}
}

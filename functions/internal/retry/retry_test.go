package retry_test

import (
	"math"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/retry"
)

// TestJitteredIsBoundedForEveryAttempt: the stream processor's old copy
// panicked at attempt 39 and 64+ (a shifted duration overflowing); this one
// stays within [1 ms, Cap + 1 ms) for any n, including nonsense.
func TestJitteredIsBoundedForEveryAttempt(t *testing.T) {
	for _, n := range []int{math.MinInt, -1, 0, 1, 2, 5, 11, 39, 63, 64, 65, 1000, math.MaxInt} {
		for range 200 {
			d := retry.Jittered(n)
			if d < time.Millisecond || d >= retry.Cap+time.Millisecond {
				t.Fatalf("Jittered(%d) = %v", n, d)
			}
		}
	}
	// The first retries stay short: at most Base.
	for range 200 {
		if d := retry.Jittered(1); d > retry.Base+time.Millisecond {
			t.Fatalf("Jittered(1) = %v", d)
		}
	}
}

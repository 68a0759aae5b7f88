// Package retry holds the one backoff policy of the project's retries
// (transaction conflicts, terminal writes): capped exponential backoff with
// full jitter. The loops stay with their callers, which know when a retry
// can still help (a fence that still holds, time left) and whose clock to
// wait on.
package retry

import (
	"math/rand/v2"
	"time"
)

// Base and Cap bound Jittered: the ceiling before retry n is
// min(Base * 2^(n-1), Cap).
const (
	Base = 50 * time.Millisecond
	Cap  = time.Second
)

// Jittered is the pause before retry n (n >= 1; smaller n counts as 1): a
// uniform draw in [1 ms, min(Base * 2^(n-1), Cap) + 1 ms). It never panics
// and never overflows, whatever n.
func Jittered(n int) time.Duration {
	shift := min(max(n-1, 0), 10) // Base << 10 > Cap already
	ceiling := min(Base<<shift, Cap)
	return rand.N(ceiling) + time.Millisecond
}

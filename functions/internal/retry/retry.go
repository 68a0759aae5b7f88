// Package retry holds the one backoff policy of the project's retries
// (transaction conflicts, terminal writes): capped exponential backoff with
// full jitter; and Policy.Do, a loop for callers that retry an error that
// wrote nothing (the movie store on TransactionConflictException). Loops that
// know more (a fence that still holds, time left, their own clock) stay with
// their callers and use Jittered.
package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Base and Cap bound Jittered: the ceiling before retry n is
// min(Base * 2^(n-1), Cap).
const (
	Base = 50 * time.Millisecond
	Cap  = time.Second
	// DefaultAttempts is Default's number of tries.
	DefaultAttempts = 5
)

// Jittered is the pause before retry n (n >= 1; smaller n counts as 1): a
// uniform draw in [1 ms, min(Base * 2^(n-1), Cap) + 1 ms). It never panics
// and never overflows, whatever n.
func Jittered(n int) time.Duration {
	shift := min(max(n-1, 0), 10) // Base << 10 > Cap already
	ceiling := min(Base<<shift, Cap)
	return rand.N(ceiling) + time.Millisecond
}

// Delay is Jittered with another base and cap. A non-positive base or cap
// gives 1 ms.
func Delay(n int, base, limit time.Duration) time.Duration {
	c := ceiling(n, base, limit)
	if c <= 0 {
		return time.Millisecond
	}
	return time.Millisecond + rand.N(c)
}

// ceiling doubles base n-1 times without overflow and caps it at limit.
func ceiling(n int, base, limit time.Duration) time.Duration {
	if base <= 0 || limit <= 0 {
		return 0
	}
	c := min(base, limit)
	for i := 1; i < n && c < limit; i++ {
		if c > limit/2 {
			return limit
		}
		c *= 2
	}
	return min(c, limit)
}

// Policy says how often and how patiently to retry.
type Policy struct {
	// Attempts is the total number of tries, the first included (< 1: 1).
	Attempts int
	// Delay is the pause before retry n (n >= 1); nil: Jittered.
	Delay func(n int) time.Duration
	// Sleep waits d or until ctx ends (returning its error); nil: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Default retries up to DefaultAttempts times with Jittered pauses.
var Default = Policy{Attempts: DefaultAttempts}

// Do calls op until it returns nil, returns an error retryable rejects, has
// been tried Attempts times, or ctx ends during a pause. It returns op's last
// error (or ctx's error if a pause was cut short, joined with op's). Only
// errors after which op wrote nothing may be retryable.
func (p Policy) Do(ctx context.Context, retryable func(error) bool, op func() error) error {
	attempts := max(p.Attempts, 1)
	delay, sleep := p.Delay, p.Sleep
	if delay == nil {
		delay = Jittered
	}
	if sleep == nil {
		sleep = Sleep
	}
	var err error
	for n := 0; n < attempts; n++ {
		if n > 0 {
			if serr := sleep(ctx, delay(n)); serr != nil {
				return joinCtx(err, serr)
			}
		}
		if err = op(); err == nil || !retryable(err) {
			return err
		}
	}
	return err
}

// Sleep waits d, or until ctx ends and returns its error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type ctxErr struct{ last, ctx error }

func (e ctxErr) Error() string   { return e.last.Error() + " (gave up: " + e.ctx.Error() + ")" }
func (e ctxErr) Unwrap() []error { return []error{e.last, e.ctx} }

func joinCtx(last, ctx error) error {
	if last == nil {
		return ctx
	}
	return ctxErr{last: last, ctx: ctx}
}

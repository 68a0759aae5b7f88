package testenv

import (
	"time"

	"k8s.io/utils/clock"
)

// SkewedClock is the real clock with Now shifted by Offset: a process whose
// wall clock is off. Timers and tickers run in real time.
type SkewedClock struct {
	clock.RealClock
	Offset time.Duration
}

// Now is the real time plus Offset.
func (c SkewedClock) Now() time.Time { return time.Now().Add(c.Offset) }

// Since is Now().Sub(t).
func (c SkewedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

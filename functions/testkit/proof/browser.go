package proof

import (
	"fmt"
	"math/rand/v2"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/token"
)

// browse is an Analyze page: it opens, heartbeats, edits, starts traces and
// releases, and sometimes acts with an old lease ID, like a stale tab.
func (c *client) browse() {
	var cur string         // the lease this page believes it holds
	var old []string       // leases it held (or asked for) before
	var seen *domain.Movie // the row as this page last saw it
	look := func(o Outcome) Outcome {
		if o.Movie != nil {
			seen = o.Movie
		}
		return o
	}
	drop := func() {
		if cur != "" {
			old = append(old, cur)
			cur = ""
		}
	}
	lease := func() string {
		switch {
		case cur != "" && c.chance(0.9):
			return cur
		case len(old) > 0 && c.chance(0.8):
			return old[c.rng.IntN(len(old))]
		default:
			return token.New() // never granted
		}
	}
	d := c.h.cfg.Lease
	for c.running() {
		c.pause()
		c.stall(0.04)
		if !c.running() {
			return
		}
		var roll int
		if cur == "" {
			roll = pick(c.rng, 45, 20, 10, 10, 5, 10, 0, 0)
		} else {
			roll = pick(c.rng, 3, 15, 12, 30, 25, 7, 7, 5)
		}
		switch roll {
		case 0: // open Analyze
			id := token.New()
			out := look(c.command(domain.OpenAnalysis{LeaseID: id, User: c.user, Now: c.now(), Duration: d}))
			if out.Accepted() {
				drop()
				cur = id
			} else {
				old = append(old, id)
			}
		case 1: // poll the metadata
			look(c.do(Call{Kind: KindRead}))
		case 2: // start a trace, with the page's lease (or none, or an old one)
			l := lease()
			if cur == "" && c.chance(0.5) {
				l = ""
			}
			job := token.New()
			from := c.rng.IntN(FrameCount) // sometimes outside the trim: refused
			if seen != nil && seen.Settings.Trim.End > seen.Settings.Trim.Start && c.chance(0.85) {
				t := seen.Settings.Trim
				from = t.Start + c.rng.IntN(t.End-t.Start)
			}
			out := look(c.command(domain.StartTrace{LeaseID: l, JobID: job, User: c.user, FromFrame: from, Now: c.now(), Duration: d}))
			if out.Accepted() || out.Unknown {
				c.h.send(delivery{job: job})
				if c.chance(0.25) {
					c.h.send(delivery{job: job}) // SQS delivers at least once
				}
				if l == cur {
					drop()
				}
			}
		case 3: // edit
			l := lease()
			var out Outcome
			switch c.rng.IntN(3) {
			case 0:
				ms := make([]domain.Marker, 1+c.rng.IntN(3))
				if c.chance(0.1) {
					ms = nil // no markers: StartTrace is refused until some are placed
				}
				for i := range ms {
					ms[i] = domain.Marker{ID: fmt.Sprintf("m%d", i), Label: "pt", X: float64(c.rng.IntN(9)) / 8, Y: float64(c.rng.IntN(9)) / 8}
				}
				out = look(c.command(domain.EditMarkers{LeaseID: l, Now: c.now(), Markers: ms}))
			case 1:
				start := c.rng.IntN(FrameCount)
				end := start + 1 + c.rng.IntN(FrameCount-start)
				if c.chance(0.1) {
					end = FrameCount + 1 + c.rng.IntN(5) // beyond the movie: refused by the condition
				}
				out = look(c.command(domain.EditTrim{LeaseID: l, Now: c.now(), Trim: domain.Trim{Start: start, End: end}}))
			default:
				out = look(c.command(domain.EditCaptureInterval{LeaseID: l, Now: c.now(), Interval: 1 + c.rng.IntN(4)}))
			}
			if l == cur && lost(out) {
				drop()
			}
		case 4: // heartbeat
			l := lease()
			out := look(c.command(domain.Heartbeat{LeaseID: l, Now: c.now(), Duration: d}))
			if l == cur && lost(out) {
				drop()
			}
		case 5: // leave the page
			l := lease()
			c.command(domain.Release{LeaseID: l, Now: c.now()})
			if l == cur {
				drop()
			}
		case 6: // the tab crashes: the lease is abandoned, never released
			drop()
		case 7: // reload: a new page instance opens Analyze again
			drop()
			id := token.New()
			if out := c.command(domain.OpenAnalysis{LeaseID: id, User: c.user, Now: c.now(), Duration: d}); out.Accepted() {
				cur = id
			} else {
				old = append(old, id)
			}
		}
	}
}

// lost reports whether a page's own write says its lease is gone.
func lost(o Outcome) bool {
	if o.Refusal == nil {
		return false
	}
	switch o.Refusal.Code {
	case domain.CodeLeaseLost, domain.CodeLeaseHeld, domain.CodeTracingInProgress:
		return true
	}
	return false
}

// pick returns an index drawn with the given weights.
func pick(r *rand.Rand, weights ...int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := r.IntN(total)
	for i, w := range weights {
		if n < w {
			return i
		}
		n -= w
	}
	return len(weights) - 1
}

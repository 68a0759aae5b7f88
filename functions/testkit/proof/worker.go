package proof

import (
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/token"
)

// work is a trace worker: it receives job IDs (possibly twice), claims,
// begins, writes fenced frames, renews and finishes, and sometimes stalls
// for a lease duration, crashes, or keeps writing after it lost its lease.
func (c *client) work() {
	for c.running() {
		job, ok := c.h.receive()
		if !ok {
			c.sleep(time.Duration(2+c.rng.IntN(10)) * time.Millisecond)
			if c.chance(0.03) {
				c.do(Call{Kind: KindRead})
			}
			continue
		}
		c.trace(job)
	}
}

func (c *client) trace(jobID string) {
	d := c.h.cfg.Lease
	out := c.command(domain.ClaimJob{JobID: jobID, Now: c.now(), Duration: d})
	if !out.Accepted() || out.Movie == nil || out.Movie.Lease == nil {
		return // a redelivery, a job already replaced, or unknown: a no-op
	}
	if c.chance(0.2) {
		c.h.send(jobID) // a redelivery of a claimed job
	}
	m := *out.Movie
	job := *m.Lease
	plan := domain.PlanTrace(m, job)
	// A zombie keeps writing after losing its lease, as a partitioned worker
	// whose lease lapsed would; every such write must be fenced off.
	zombie := c.chance(0.5)
	gone := false
	fence := func(o Outcome) {
		if o.Refusal != nil {
			gone = true
		}
	}
	fence(c.command(domain.BeginTrace{JobFence: domain.JobFence{JobID: jobID, Now: c.now()}, Duration: d, CleanBefore: plan.ClearFrom, TotalFrames: plan.Frames}))
	written := 0
	frames := min(plan.Frames, 2+c.rng.IntN(8))
	for i := range frames {
		if (gone && !zombie) || !c.running() {
			return
		}
		c.pause()
		c.stall(0.08)
		o := c.do(Call{Kind: KindFrame, Fence: domain.JobFence{JobID: jobID, Now: c.now()}, Frame: plan.FrameAt(i), Token: token.New()})
		fence(o)
		if o.Accepted() {
			written++
		}
		if i%2 == 1 {
			fence(c.command(domain.RenewJob{JobFence: domain.JobFence{JobID: jobID, Now: c.now()}, Duration: d, FramesWritten: written}))
		}
	}
	if (gone && !zombie) || !c.running() {
		return
	}
	switch r := c.rng.Float64(); {
	case r < 0.1: // crash before the terminal write
	case r < 0.3:
		c.command(domain.FailJob{Job: job, Now: c.now(), FramesWritten: written, Summary: "marker m0 lost at /var/task/trace.go:42 token=abc"})
	default:
		c.command(domain.CompleteJob{Job: job, Now: c.now(), FramesWritten: written})
	}
}

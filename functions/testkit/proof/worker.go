package proof

import (
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/token"
)

// delivery is one trace message as SQS would deliver it: a job's segment (0
// for the message the stream processor sends, k for the k-th continuation).
type delivery struct {
	job     string
	segment int
}

// work is a trace worker sending the commands the production worker sends
// (functions/internal/worker): it receives segments (possibly twice),
// claims each (ClaimSegment, with a per-attempt token, sometimes retried as
// the SDK retries a lost answer), begins the first, writes fenced frames,
// renews, and ends the segment by handing the job off (HandOffJob, then the
// continuation message), completing or failing it, or not at all (a crash);
// it sometimes stalls for a lease duration or keeps writing after it lost
// its lease. Idle, it sometimes reads the row or sweeps it as the sweeper
// does (FinalizeStaleTrace of a stale tracing lease, domain.StaleTraceAt).
func (c *client) work() {
	for c.running() {
		d, ok := c.h.receive()
		if !ok {
			c.sleep(time.Duration(2+c.rng.IntN(10)) * time.Millisecond)
			switch {
			case c.chance(0.03):
				c.do(Call{Kind: KindRead})
			case c.chance(0.15):
				c.sweep()
			}
			continue
		}
		c.trace(d)
	}
}

// sweep is the sweeper's rule on the row as read.
func (c *client) sweep() {
	out := c.do(Call{Kind: KindRead})
	if out.Movie == nil {
		return
	}
	if f, ok := domain.StaleTraceAt(*out.Movie, c.now()); ok {
		c.command(f)
		return
	}
	c.sweepLifecycle(*out.Movie)
}

func (c *client) trace(d delivery) {
	lease := c.h.cfg.Lease
	claim := domain.ClaimSegment{JobID: d.job, Segment: d.segment, Token: token.New(), Now: c.now(), Duration: lease}
	out := c.command(claim)
	if c.chance(0.1) {
		claim.Now = c.now()
		out = c.command(claim) // the same attempt's request again, as after a lost answer
	}
	if !out.Accepted() || out.Movie == nil || out.Movie.Lease == nil {
		return // a redelivery, a job already replaced or ended, or unknown: a no-op
	}
	if c.chance(0.2) {
		c.h.send(d) // a redelivery of a claimed segment
	}
	m := *out.Movie
	job := *m.Lease
	fence := func() domain.JobFence { return domain.JobFence{JobID: d.job, Now: c.now()} }
	// A zombie keeps writing after losing its lease, as a partitioned worker
	// whose lease lapsed would; every such write must be fenced off.
	zombie := c.chance(0.5)
	gone := false
	fenced := func(o Outcome) {
		if o.Refusal != nil {
			gone = true
		}
	}
	var plan domain.TracePlan
	written := 0
	if d.segment == 0 {
		plan = domain.PlanTrace(m, job)
		fenced(c.command(domain.BeginTrace{JobFence: fence(), Duration: lease, CleanBefore: plan.ClearFrom, TotalFrames: plan.Frames, PlanFrom: plan.From}))
	} else {
		p, err := domain.ResumePlan(m)
		if err != nil {
			c.command(domain.FailJob{Job: job, Now: c.now(), FramesWritten: m.Progress.FramesWritten, Summary: err.Error()})
			return
		}
		plan, written = p, m.Progress.FramesWritten
	}
	frames := min(plan.Frames, written+1+c.rng.IntN(6))
	for i := written; i < frames; i++ {
		if (gone && !zombie) || !c.running() {
			return
		}
		c.pause()
		c.stall(0.08)
		o := c.do(Call{Kind: KindFrame, Fence: fence(), Frame: plan.FrameAt(i), Token: token.New()})
		fenced(o)
		if o.Accepted() {
			written++
		}
		if i%2 == 1 {
			fenced(c.command(domain.RenewJob{JobFence: fence(), Duration: lease, FramesWritten: written}))
		}
	}
	if (gone && !zombie) || !c.running() {
		return
	}
	switch r := c.rng.Float64(); {
	case r < 0.1: // crash before the segment's last write
	case r < 0.25:
		c.command(domain.FailJob{Job: job, Now: c.now(), FramesWritten: written, Summary: "marker m0 lost at /var/task/trace.go:42 token=abc"})
	case r < 0.6 && written < plan.Frames:
		o := c.command(domain.HandOffJob{JobFence: fence(), Segment: d.segment, Duration: lease, FramesWritten: written,
			CleanBefore: plan.FrameAt(written)})
		if o.Accepted() || o.Unknown {
			c.h.send(delivery{job: d.job, segment: d.segment + 1})
		}
	default:
		c.command(domain.CompleteJob{Job: job, Now: c.now(), FramesWritten: written})
	}
}

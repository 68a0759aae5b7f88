package proof

import (
	"fmt"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// commandNow returns the Now a command was decided with.
func commandNow(cmd domain.Command) time.Time {
	switch x := cmd.(type) {
	case domain.OpenAnalysis:
		return x.Now
	case domain.Heartbeat:
		return x.Now
	case domain.Release:
		return x.Now
	case domain.EditMarkers:
		return x.Now
	case domain.EditTrim:
		return x.Now
	case domain.EditCaptureInterval:
		return x.Now
	case domain.StartTrace:
		return x.Now
	case domain.ClaimSegment:
		return x.Now
	case domain.HandOffJob:
		return x.Now
	case domain.BeginTrace:
		return x.Now
	case domain.RenewJob:
		return x.Now
	case domain.CompleteJob:
		return x.Now
	case domain.FailJob:
		return x.Now
	case domain.FinalizeStaleTrace:
		return x.Now
	}
	return lifecycleNow(cmd)
}

// jobOf returns the job ID a worker command acts for, or "".
func jobOf(cmd domain.Command) string {
	switch x := cmd.(type) {
	case domain.ClaimSegment:
		return x.JobID
	case domain.HandOffJob:
		return x.JobID
	case domain.BeginTrace:
		return x.JobID
	case domain.RenewJob:
		return x.JobID
	case domain.CompleteJob:
		return x.Job.ID
	case domain.FailJob:
		return x.Job.ID
	}
	return ""
}

// step checks one committed write against the row it was committed on.
// Each rule is stated from the seed, not from the command's Decide.
func (c *checker) step(w *Op, prev, next domain.Movie) {
	cmd := w.Call.Cmd
	now := commandNow(cmd)
	pl := prev.Lease
	live := pl.LiveAt(now)
	gone := pl != nil && (next.Lease == nil || next.Lease.ID != pl.ID || next.Lease.Kind != pl.Kind)

	// Never two live leases: a live lease leaves the row only by its
	// holder's own hand.
	if live && gone {
		own := false
		switch x := cmd.(type) {
		case domain.Release:
			own = pl.Kind == domain.LeaseAnalysis && x.LeaseID == pl.ID
		case domain.StartTrace:
			own = pl.Kind == domain.LeaseAnalysis && x.LeaseID == pl.ID
		case domain.CompleteJob:
			own = pl.Kind == domain.LeaseTracing && x.Job.ID == pl.ID
		case domain.FailJob:
			own = pl.Kind == domain.LeaseTracing && x.Job.ID == pl.ID
		}
		if !own {
			c.fail(w, "replaced the %s lease %s that was live at its Now (expires %s): two live leases",
				pl.Kind, short(pl.ID), rel(pl.ExpiresAt, c.h.Base))
		}
	}
	if pl != nil && !live && gone && next.Lease != nil {
		c.stats.Takeovers++
		if r, ok := c.renewer[pl.ID]; ok {
			taker := now.Add(-c.h.Config.Skews[w.Client])
			holderExpiry := pl.ExpiresAt.Add(-c.h.Config.Skews[r])
			if taker.Before(holderExpiry) {
				c.stats.EarlyTakeovers++
			}
		}
	}
	// A new lease comes only from the command that asks for it.
	if nl := next.Lease; nl != nil && (pl == nil || nl.ID != pl.ID) {
		ok := false
		switch x := cmd.(type) {
		case domain.OpenAnalysis:
			ok = nl.Kind == domain.LeaseAnalysis && nl.ID == x.LeaseID
		case domain.StartTrace:
			ok = nl.Kind == domain.LeaseTracing && nl.ID == x.JobID
		}
		if !ok {
			c.fail(w, "installed lease %s it did not ask for", short(nl.ID))
		}
	}

	holds := func(kind domain.LeaseKind, id string) bool {
		return pl != nil && live && pl.Kind == kind && pl.ID == id
	}
	switch x := cmd.(type) {
	case domain.EditMarkers:
		if !holds(domain.LeaseAnalysis, x.LeaseID) {
			c.fail(w, "an edit landed without the live analysis lease (row had %s)", describeLease(pl, now))
		}
	case domain.EditTrim:
		if !holds(domain.LeaseAnalysis, x.LeaseID) {
			c.fail(w, "an edit landed without the live analysis lease (row had %s)", describeLease(pl, now))
		}
	case domain.EditCaptureInterval:
		if !holds(domain.LeaseAnalysis, x.LeaseID) {
			c.fail(w, "an edit landed without the live analysis lease (row had %s)", describeLease(pl, now))
		}
	case domain.Heartbeat:
		if !holds(domain.LeaseAnalysis, x.LeaseID) {
			c.fail(w, "a heartbeat landed without the live analysis lease (row had %s)", describeLease(pl, now))
		}
	case domain.Release:
		if !holds(domain.LeaseAnalysis, x.LeaseID) {
			c.fail(w, "a release removed %s, not its own live analysis lease", describeLease(pl, now))
		}
	}
	if job := jobOf(cmd); job != "" {
		if r := c.replaced[job]; r != nil {
			c.fail(w, "landed for job %s after its lease was replaced by op %d", short(job), r.ID)
		}
		if claim, ok := cmd.(domain.ClaimSegment); ok {
			// A claim may revive the job's stale lease (a job that waited in
			// the queue past its lease), never another lease.
			if pl == nil || pl.Kind != domain.LeaseTracing || pl.ID != job {
				c.fail(w, "claimed job %s without its tracing lease (row had %s)", short(job), describeLease(pl, now))
			}
			if first := c.claims[claimKey(claim)]; first != nil {
				c.fail(w, "claimed segment %d of job %s a second time (first claim: op %d)", claim.Segment, short(job), first.ID)
			}
			if !c.started[job] {
				c.fail(w, "claimed job %s, which no accepted StartTrace created", short(job))
			}
		} else if !holds(domain.LeaseTracing, job) {
			c.fail(w, "landed without job %s's live tracing lease (row had %s)", short(job), describeLease(pl, now))
		} else if pl != nil && !pl.Claimed {
			c.fail(w, "landed for job %s before any claim", short(job))
		}
	}
}

// track keeps the per-job and per-lease bookkeeping the checks use.
func (c *checker) track(w *Op, prev, next domain.Movie) {
	switch x := w.Call.Cmd.(type) {
	case domain.StartTrace:
		c.started[x.JobID] = true
	case domain.HandOffJob:
		c.stats.HandOffs++
	case domain.FinalizeStaleTrace:
		c.stats.Sweeps++
	case domain.ClaimSegment:
		if x.Segment > 0 {
			c.stats.Continuations++
		}
		for _, k := range []string{claimKey(x), x.JobID} {
			if c.claims[k] == nil {
				c.claims[k] = w
			}
		}
	}
	if pl := prev.Lease; pl != nil && pl.Kind == domain.LeaseTracing && (next.Lease == nil || next.Lease.ID != pl.ID) {
		if c.replaced[pl.ID] == nil {
			c.replaced[pl.ID] = w
		}
	}
	if nl := next.Lease; nl != nil && (prev.Lease == nil || prev.Lease.ID != nl.ID || !prev.Lease.ExpiresAt.Equal(nl.ExpiresAt)) {
		c.renewer[nl.ID] = w.Client
	}
}

func describeLease(l *domain.Lease, now time.Time) string {
	if l == nil {
		return "no lease"
	}
	state := "live"
	if !l.LiveAt(now) {
		state = "stale"
	}
	return fmt.Sprintf("the %s %s lease %s", state, l.Kind, short(l.ID))
}

// claimKey names one segment of one job.
func claimKey(c domain.ClaimSegment) string { return fmt.Sprintf("%s/%d", c.JobID, c.Segment) }

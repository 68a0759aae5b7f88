package dynamo

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
)

// write is one command as DynamoDB expressions: the condition is the
// domain's Decide, the update is its Apply.
type write struct {
	cond   expression.ConditionBuilder
	update expression.UpdateBuilder
}

func name(n string) expression.NameBuilder { return expression.Name(n) }

func millis(t time.Time) expression.ValueBuilder { return expression.Value(events.Millis(t)) }

// movieExists holds for every stored movie.
func movieExists() expression.ConditionBuilder {
	return name(events.AttrMovieID).AttributeExists()
}

// leaseIs mirrors Lease.is: the stored lease is live at now, of kind k, with id.
func leaseIs(k domain.LeaseKind, id string, now time.Time) expression.ConditionBuilder {
	return expression.And(
		name(events.AttrLeaseKind).Equal(expression.Value(string(k))),
		name(events.AttrLeaseID).Equal(expression.Value(id)),
		name(events.AttrLeaseExpiresAt).GreaterThan(millis(now)),
	)
}

// noLiveLease mirrors Movie.LiveLease(now) == nil.
func noLiveLease(now time.Time) expression.ConditionBuilder {
	return expression.Or(
		name(events.AttrLease).AttributeNotExists(),
		name(events.AttrLeaseExpiresAt).LessThanEqual(millis(now)),
	)
}

// fence mirrors JobFence.Decide: the claimed live tracing lease of the job.
func fence(f domain.JobFence) expression.ConditionBuilder {
	return expression.And(
		leaseIs(domain.LeaseTracing, f.JobID, f.Now),
		name(events.AttrLeaseClaimed).Equal(expression.Value(true)),
	)
}

// changed mirrors domain's bookkeeping on every committed change.
func changed(now time.Time) expression.UpdateBuilder {
	return expression.Set(name(events.AttrVersion), name(events.AttrVersion).Plus(expression.Value(1))).
		Set(name(events.AttrUpdatedAt), millis(now))
}

func renewLease(u expression.UpdateBuilder, now time.Time, d time.Duration) expression.UpdateBuilder {
	return u.Set(name(events.AttrLeaseHeartbeatAt), millis(now)).
		Set(name(events.AttrLeaseExpiresAt), millis(now.Add(d)))
}

// finish mirrors domain's terminal write: the job's lease is removed and
// the outcome recorded.
func finish(now time.Time, job domain.Lease, status domain.Status, frames int, summary string) expression.UpdateBuilder {
	rec := events.NewJobItem(job.Outcome(now, status, frames, summary))
	return changed(now).Remove(name(events.AttrLease)).
		Set(name(events.AttrStatus), expression.Value(string(status))).
		Set(name(events.AttrFramesWritten), expression.Value(frames)).
		Set(name(events.AttrLastJob), expression.Value(rec))
}

// writeFor translates a command into its conditional write. Each case states
// the same precondition as the command's Decide, clause for clause.
func writeFor(cmd domain.Command) (write, error) {
	switch c := cmd.(type) {
	case domain.OpenAnalysis:
		lease := events.NewLeaseItem(domain.Lease{
			Kind: domain.LeaseAnalysis, ID: c.LeaseID, UserID: c.User.ID, UserName: c.User.Name,
			AcquiredAt: c.Now, HeartbeatAt: c.Now, ExpiresAt: c.Now.Add(c.Duration),
		})
		return write{
			cond:   movieExists().And(noLiveLease(c.Now)),
			update: changed(c.Now).Set(name(events.AttrLease), expression.Value(lease)),
		}, nil

	case domain.Heartbeat:
		return write{
			cond:   leaseIs(domain.LeaseAnalysis, c.LeaseID, c.Now),
			update: renewLease(changed(c.Now), c.Now, c.Duration),
		}, nil

	case domain.Release:
		return write{
			cond:   leaseIs(domain.LeaseAnalysis, c.LeaseID, c.Now),
			update: changed(c.Now).Remove(name(events.AttrLease)),
		}, nil

	case domain.EditMarkers:
		return write{
			cond:   leaseIs(domain.LeaseAnalysis, c.LeaseID, c.Now),
			update: changed(c.Now).Set(name(events.AttrMarkers), expression.Value(events.NewMarkerItems(c.Markers))),
		}, nil

	case domain.EditTrim:
		return write{
			cond: leaseIs(domain.LeaseAnalysis, c.LeaseID, c.Now).
				And(name(events.AttrFrameCount).GreaterThanEqual(expression.Value(c.Trim.End))),
			update: changed(c.Now).
				Set(name(events.AttrTrimStart), expression.Value(c.Trim.Start)).
				Set(name(events.AttrTrimEnd), expression.Value(c.Trim.End)).
				Set(name(events.AttrCleanBefore), expression.Value(0)),
		}, nil

	case domain.EditCaptureInterval:
		return write{
			cond: leaseIs(domain.LeaseAnalysis, c.LeaseID, c.Now),
			update: changed(c.Now).
				Set(name(events.AttrCaptureInterval), expression.Value(c.Interval)).
				Set(name(events.AttrCleanBefore), expression.Value(0)),
		}, nil

	case domain.StartTrace:
		owner := noLiveLease(c.Now)
		if c.LeaseID != "" {
			owner = expression.Or(leaseIs(domain.LeaseAnalysis, c.LeaseID, c.Now), owner)
		}
		lease := events.NewLeaseItem(domain.Lease{
			Kind: domain.LeaseTracing, ID: c.JobID, UserID: c.User.ID, UserName: c.User.Name,
			AcquiredAt: c.Now, HeartbeatAt: c.Now, ExpiresAt: c.Now.Add(c.Duration), FromFrame: c.FromFrame,
		})
		return write{
			cond: expression.And(movieExists(), owner,
				expression.Size(name(events.AttrMarkers)).GreaterThan(expression.Value(0)),
				name(events.AttrTrimStart).LessThanEqual(expression.Value(c.FromFrame)),
				name(events.AttrTrimEnd).GreaterThan(expression.Value(c.FromFrame)),
			),
			update: changed(c.Now).
				Set(name(events.AttrLease), expression.Value(lease)).
				Set(name(events.AttrStatus), expression.Value(string(domain.StatusTracing))).
				Set(name(events.AttrFramesWritten), expression.Value(0)).
				Set(name(events.AttrTotalFrames), expression.Value(0)),
		}, nil

	case domain.ClaimJob:
		return write{
			cond: leaseIs(domain.LeaseTracing, c.JobID, c.Now).
				And(name(events.AttrLeaseClaimed).Equal(expression.Value(false))),
			update: renewLease(changed(c.Now), c.Now, c.Duration).
				Set(name(events.AttrLeaseClaimed), expression.Value(true)),
		}, nil

	case domain.BeginTrace:
		return write{
			cond: fence(c.JobFence),
			update: renewLease(changed(c.Now), c.Now, c.Duration).
				Set(name(events.AttrCleanBefore), expression.Value(c.CleanBefore)).
				Set(name(events.AttrFramesWritten), expression.Value(0)).
				Set(name(events.AttrTotalFrames), expression.Value(c.TotalFrames)),
		}, nil

	case domain.RenewJob:
		return write{
			cond: fence(c.JobFence),
			update: renewLease(changed(c.Now), c.Now, c.Duration).
				Set(name(events.AttrFramesWritten), expression.Value(c.FramesWritten)),
		}, nil

	case domain.CompleteJob:
		return write{
			cond: fence(domain.JobFence{JobID: c.Job.ID, Now: c.Now}),
			update: finish(c.Now, c.Job, domain.StatusTraced, c.FramesWritten, "").
				Set(name(events.AttrCleanBefore), expression.Value(c.CleanBefore)),
		}, nil

	case domain.FailJob:
		return write{
			cond:   fence(domain.JobFence{JobID: c.Job.ID, Now: c.Now}),
			update: finish(c.Now, c.Job, domain.StatusFailed, c.FramesWritten, c.SafeSummary()),
		}, nil
	}
	return write{}, fmt.Errorf("dynamo: no conditional write for %T", cmd)
}

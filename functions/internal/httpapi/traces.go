package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/movietrace/tracinglocks/domain"
)

// POST /movies/{id}/traces {"fromFrame": n}: start (or retrace from n). The
// one conditional write replaces the caller's analysis lease (Lease-Id, if
// sent) with the new tracing lease and sets status tracing; the stream
// processor then enqueues the job. Without a Lease-Id the trace starts only
// when no lease is live.
func (h *Handler) startTrace(w http.ResponseWriter, r *http.Request, c call) error {
	leaseID, err := leaseHeader(r)
	if err != nil {
		return err
	}
	body, err := readBody(w, r, true)
	if err != nil {
		return err
	}
	from, err := decodeTrace(body)
	if err != nil {
		return err
	}
	jobID := h.cfg.NewID()
	m, err := h.cfg.Movies.Commit(r.Context(), c.movieID, domain.StartTrace{
		LeaseID: leaseID, JobID: jobID, User: c.user, FromFrame: from,
		Now: c.now, Duration: h.cfg.LeaseDuration,
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, TraceStarted{JobID: jobID, Status: m.Status, Version: m.Version})
}

// POST /movies/{id}/traces/cancel: the user who started the running trace
// cancels it. The route reads the movie (to name the job and its progress),
// then makes one conditional write, domain.CancelTrace, whose precondition
// is that this very job still holds the live tracing lease and the caller
// started it. The worker stops at its next fenced write; the frames it
// wrote are kept. 200 with the metadata (status tracing_cancelled).
func (h *Handler) cancelTrace(w http.ResponseWriter, r *http.Request, c call) error {
	m, err := h.cfg.Movies.Get(r.Context(), c.movieID)
	if err != nil {
		return err
	}
	job := m.LiveLease(c.now)
	if job == nil || job.Kind != domain.LeaseTracing {
		return &domain.Error{Code: domain.CodeNotTracing, Message: "no trace is running"}
	}
	done, err := h.cfg.Movies.Commit(r.Context(), c.movieID, domain.CancelTrace{
		Job: *job, User: c.user, Now: c.now, FramesWritten: m.Progress.FramesWritten,
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, detail(h.settleCancel(r.Context(), c, done, *job), c.now, c.user))
}

// settleCancel records how many frames the cancelled job really wrote
// (domain.SettleCancel): the cancel recorded its last published progress,
// and the job may have written frames since. Now that the cancel committed
// no frame of the job can land, so counting the job's stored frames gives
// the final number, and the list, Last trace, Results, History and a
// download agree. It is best effort: on any failure the cancel stands with
// the published progress (logged), and done is answered.
func (h *Handler) settleCancel(ctx context.Context, c call, done domain.Movie, job domain.Lease) domain.Movie {
	stored, mine, err := h.countFrames(ctx, c.movieID, job.ID)
	if err == nil && done.LastJob != nil && done.LastJob.Frames == mine && done.KeptFrames == stored-mine {
		return done
	}
	if err == nil {
		var settled domain.Movie
		settled, err = h.cfg.Movies.Commit(ctx, c.movieID, domain.SettleCancel{JobID: job.ID, Frames: mine, Kept: stored - mine, Now: h.cfg.Now()})
		if err == nil {
			return settled
		}
	}
	h.cfg.Logger.WarnContext(ctx, "cancelled trace's frame count not settled", slog.String("movieId", c.movieID), slog.String("error", err.Error()))
	return done
}

// countFrames counts the movie's stored frames, and those of them the job
// wrote. A job cancelled before it began cleared nothing, so every stored
// frame is counted, not only those from the job's plan on.
func (h *Handler) countFrames(ctx context.Context, movieID, jobID string) (stored, mine int, err error) {
	from := 0
	for range domain.MaxFrameCount/settlePage + 2 {
		page, next, err := h.cfg.Frames.Page(ctx, movieID, from, settlePage)
		if err != nil {
			return 0, 0, err
		}
		stored += len(page)
		for _, f := range page {
			if f.JobID == jobID {
				mine++
			}
		}
		if next == nil {
			return stored, mine, nil
		}
		from = *next
	}
	return 0, 0, errors.New("cancel: too many frame pages")
}

// settlePage is the page size settleCancel reads frames in.
const settlePage = 1000

package ingest

import (
	"context"
	"errors"
	"log/slog"

	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
)

// decision is the movie's media.Decision: read from its record
// (media.DecisionKey), or, when there is none (the first range; a record
// lost, unreadable or of another version), decided from the upload and
// recorded, so only the first range reads the whole upload before it
// prepares. The record depends on the upload alone: a range that decides
// again writes the same bytes under the same key, as a redone range writes
// its chunks.
func (h *Handler) decision(ctx context.Context, log *slog.Logger, movieID, src string) (media.Decision, error) {
	key := media.DecisionKey(movieID)
	data, err := h.opts.Files.Get(ctx, key)
	switch {
	case err == nil:
		d, err := media.ParseDecision(data)
		if err == nil {
			return d, nil
		}
		log.Warn("ingest: the recorded decision cannot be used; deciding again", slog.String("error", err.Error()))
	case !errors.Is(err, s3store.ErrNotFound):
		return media.Decision{}, err
	}
	// The probe gives the seek timing too (one ffprobe): none (the zero
	// Timing) when the rate is not constant or the container not indexed,
	// and a later range then counts frames.
	info, timing, err := probeUpload(ctx, src)
	if err != nil {
		return media.Decision{}, err
	}
	d := media.Decision{Info: info, Timing: timing, Plan: planRendition(ctx, src, info, h.opts.ChunkFrames)}
	body, err := media.EncodeDecision(d)
	if err != nil {
		return d, err
	}
	if err := h.opts.Files.Put(ctx, key, media.DecisionType, body); err != nil {
		return d, err
	}
	log.Info("ingest: rendition planned", slog.String("rendition", d.Plan.Rendition()),
		slog.Int("chunkFrames", d.Plan.ChunkFrames), slog.String("why", d.Plan.Reason), slog.Int("recordBytes", len(body)))
	return d, nil
}

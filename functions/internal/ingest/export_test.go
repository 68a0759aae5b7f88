package ingest

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/video"
)

// UploadReads counts the ingest's whole-upload reads made to decide a
// movie's rendition: its probes and its plans.
type UploadReads struct{ Probes, Plans atomic.Int64 }

// CountUploadReads counts them until the test ends.
func CountUploadReads(t testing.TB) *UploadReads {
	r := &UploadReads{}
	probe, plan := probeUpload, planRendition
	probeUpload = func(ctx context.Context, src string) (video.Info, video.Timing, error) {
		r.Probes.Add(1)
		return probe(ctx, src)
	}
	planRendition = func(ctx context.Context, src string, info video.Info, chunkFrames int) media.Plan {
		r.Plans.Add(1)
		return plan(ctx, src, info, chunkFrames)
	}
	t.Cleanup(func() { probeUpload, planRendition = probe, plan })
	return r
}

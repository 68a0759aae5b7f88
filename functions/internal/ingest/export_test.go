package ingest

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/movietrace/tracinglocks/functions/internal/media"
)

// UploadReads counts the ingest's reads of the whole upload to decide a
// movie's rendition (one ffprobe each: the probe and the plan).
type UploadReads struct{ Decisions atomic.Int64 }

// CountUploadReads counts them until the test ends.
func CountUploadReads(t testing.TB) *UploadReads {
	r := &UploadReads{}
	decide := decideUpload
	decideUpload = func(ctx context.Context, src string, chunkFrames int) (media.Decision, error) {
		r.Decisions.Add(1)
		return decide(ctx, src, chunkFrames)
	}
	t.Cleanup(func() { decideUpload = decide })
	return r
}

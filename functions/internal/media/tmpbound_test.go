package media_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/video"
)

// chunkFiles counts the chunk files under dir.
func chunkFiles(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "c") && strings.HasSuffix(d.Name(), ".mp4") {
			n++
		}
		return nil
	})
	return n
}

// TestRemuxKeepsTmpBounded: the remux of a long movie never has more than
// media.CopyBatch chunk files in the temporary directory (Lambda's /tmp is
// small; issue 22's one-hour simulation found the remux copying the whole
// upload there while the chunks were proven). A clip of 100 GOPs of 4
// frames, prepared in one range; the files are counted at every store and
// by a sampler, never by time.
func TestRemuxKeepsTmpBounded(t *testing.T) {
	const frames, gop = 400, 4
	src := h264(t, source(t, frames), "short-gops.mp4", "-bf", "2", "-g", "4", "-keyint_min", "4", "-sc_threshold", "0")
	ctx := context.Background()
	info, err := video.Probe(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	plan := media.PlanRendition(ctx, src, info, 0)
	if plan.Copy == nil || plan.ChunkFrames != gop {
		t.Fatalf("not remuxed in chunks of %d: %+v (%s)", gop, plan, plan.Reason)
	}
	tmp := t.TempDir()
	var mu sync.Mutex
	peak := 0
	see := func() {
		n := chunkFiles(tmp)
		mu.Lock()
		peak = max(peak, n)
		mu.Unlock()
	}
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
				see()
			}
		}
	}()
	objs := newObjects()
	put := objs.store("long")
	res, err := media.PrepareRange(ctx, src, plan, media.PrepareOptions{ExpectedFrames: info.FrameCount, FrameRate: info.FrameRate, TempDir: tmp},
		func(ctx context.Context, c media.Chunk) error {
			see()
			return put(ctx, c)
		})
	close(done)
	<-sampled
	if err != nil || !res.Done || res.NextFrame != frames || res.Copied != frames/gop {
		t.Fatalf("%+v %v", res, err)
	}
	if peak > media.CopyBatch || peak < 1 {
		t.Fatalf("%d chunk files at once in the temporary directory, at most %d wanted", peak, media.CopyBatch)
	}
	t.Logf("at most %d chunk files at once, of %d chunks", peak, frames/gop)
}

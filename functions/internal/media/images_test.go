package media_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// jpegFrame returns the frame index a JPEG of the provider shows.
func jpegFrame(jpg []byte) (int, error) {
	luma, width, _, err := videotest.JPEGLuma(jpg)
	if err != nil {
		return 0, err
	}
	return videotest.IndexOf(luma, width), nil
}

// TestImagesInAnyOrder: the image of frame n shows frame n whatever the
// order of the requests: stepping forwards (a run waits at its horizon and
// goes on), backwards (a run starts before the frame asked), jumping
// across chunks, and many at once.
func TestImagesInAnyOrder(t *testing.T) {
	src := source(t, 100)
	objs := newObjects()
	m := prepare(t, src, objs, "order", 30)
	p, err := media.NewProvider(media.ProviderOptions{Objects: objs})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	get := func(n int) {
		t.Helper()
		img, err := p.Image(ctx, m, n)
		if err != nil {
			t.Fatalf("frame %d: %v", n, err)
		}
		if got, err := jpegFrame(img); err != nil || got != n {
			t.Fatalf("the image of frame %d shows frame %d (%v)", n, got, err)
		}
	}
	for _, tc := range []struct {
		name   string
		frames []int
	}{
		{"forwards past the horizon", []int{0, 1, 2, 3, 20, 21, 28, 29, 30, 31}},
		{"backwards", []int{59, 58, 57, 56, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40}},
		{"jumps", []int{77, 3, 95, 61, 99, 33}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range tc.frames {
				get(n)
			}
		})
	}
	t.Run("many at once", func(t *testing.T) {
		q, err := media.NewProvider(media.ProviderOptions{Objects: objs, CacheBytes: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		order := rand.New(rand.NewPCG(7, 0)).Perm(100)
		var wg sync.WaitGroup
		errs := make(chan error, len(order))
		for _, n := range order {
			wg.Go(func() {
				img, err := q.Image(ctx, m, n)
				if err == nil {
					var got int
					if got, err = jpegFrame(img); err == nil && got != n {
						err = fmt.Errorf("the image of frame %d shows frame %d", n, got)
					}
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestEncodedChunksHaveInnerKeyFrames: an encoded chunk has a keyframe at
// its start and every media.KeyFrameInterval frames (what lets the viewer
// start a decode near the frame asked), counted from each chunk's start
// whatever the chunk size.
func TestEncodedChunksHaveInnerKeyFrames(t *testing.T) {
	src := source(t, 100)
	objs := newObjects()
	m := prepare(t, src, objs, "keys", 30) // chunks of 30, 30, 30, 10
	k := media.KeyFrameInterval
	for c := range 4 {
		var want []int
		for f := 0; f < min(30, 100-30*c); f++ {
			if f%k == 0 {
				want = append(want, f)
			}
		}
		path := filepath.Join(t.TempDir(), "chunk.mp4")
		if err := os.WriteFile(path, objs.m[media.ChunkKey(m.ID, c)], 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,flags",
			"-of", "csv=p=0", path).Output()
		if err != nil {
			t.Fatal(err)
		}
		type pkt struct {
			pts int
			key bool
		}
		var pkts []pkt
		for _, line := range strings.Fields(string(out)) {
			pts, flags, _ := strings.Cut(line, ",")
			v, err := strconv.Atoi(pts)
			if err != nil {
				t.Fatalf("ffprobe line %q", line)
			}
			pkts = append(pkts, pkt{v, strings.HasPrefix(flags, "K")})
		}
		sort.Slice(pkts, func(i, j int) bool { return pkts[i].pts < pkts[j].pts })
		var got []int
		for i, p := range pkts {
			if p.key {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("chunk %d: keyframes at %v, want %v", c, got, want)
		}
	}
}

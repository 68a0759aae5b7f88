package media

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/video"
)

// Objects is what the provider needs of the movies bucket (s3store.Store).
type Objects interface {
	Get(ctx context.Context, key string) ([]byte, error)
	PresignGet(ctx context.Context, key string, expires time.Duration) (string, error)
}

// ProviderOptions configure a Provider.
type ProviderOptions struct {
	Objects Objects
	// CacheBytes bounds the decoded images kept (64 MiB when 0).
	CacheBytes int
	// TempDir holds chunks while they are decoded (os.TempDir when "").
	TempDir string
}

// Provider is the one frame provider (see the package comment).
type Provider struct {
	o     ProviderOptions
	mu    sync.Mutex
	cache map[cacheKey]*list.Element
	lru   *list.List // of *chunkImages, most recent first
	bytes int
	runs  []*imageRun // every image run not done
}

type cacheKey struct {
	movie string
	chunk int
}

// NewProvider returns a provider.
func NewProvider(o ProviderOptions) (*Provider, error) {
	if o.Objects == nil {
		return nil, errors.New("media: no objects")
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = 64 << 20
	}
	return &Provider{o: o, cache: map[cacheKey]*list.Element{}, lru: list.New()}, nil
}

// fetch writes chunk k of l to a temporary file and returns its path.
func (p *Provider) fetch(ctx context.Context, l Layout, k int) (string, func(), error) {
	data, err := p.o.Objects.Get(ctx, ChunkKey(l.MovieID, k))
	if err != nil {
		return "", nil, fmt.Errorf("media: chunk %d of %s: %w", k, l.MovieID, err)
	}
	f, err := os.CreateTemp(p.o.TempDir, "chunk-*.mp4")
	if err != nil {
		return "", nil, err
	}
	done := func() { _ = os.Remove(f.Name()) }
	if _, err := f.Write(data); err != nil {
		f.Close()
		done()
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		done()
		return "", nil, err
	}
	return f.Name(), done, nil
}

// ReadFrames calls fn, in order, with the gray frames of movie m in
// [o.Start, o.End) every o.Step frames (End 0: to the end), decoded from
// the rendition's chunks at the rendition's size (o.Width and o.Height are
// ignored). The next chunk is fetched while one is decoded. Frame indexes
// are the movie's.
func (p *Provider) ReadFrames(ctx context.Context, m domain.Movie, o video.ReadOptions, fn func(video.Frame) error) error {
	l, err := LayoutOf(m)
	if err != nil {
		return err
	}
	step := max(o.Step, 1)
	end := o.End
	if end == 0 {
		end = l.FrameCount
	}
	if o.Start < 0 || o.Step < 0 || end <= o.Start || end > l.FrameCount {
		return fmt.Errorf("media: frames [%d, %d) of a movie of %d", o.Start, end, l.FrameCount)
	}
	type fetched struct {
		path string
		done func()
		err  error
	}
	get := func(k int) chan fetched {
		ch := make(chan fetched, 1)
		go func() {
			path, done, err := p.fetch(ctx, l, k)
			ch <- fetched{path, done, err}
		}()
		return ch
	}
	n := l.ChunkFrames
	firstChunk, lastChunk := o.Start/n, (end-1)/n
	next := get(firstChunk)
	for k := firstChunk; k <= lastChunk; k++ {
		f := <-next
		if k < lastChunk {
			next = get(k + 1)
		}
		if f.err != nil {
			return f.err
		}
		base := k * n
		// The first frame of the grid in this chunk.
		s := max(o.Start, base)
		if r := (s - o.Start) % step; r != 0 {
			s += step - r
		}
		e := min(end, base+n)
		if s >= e {
			f.done()
			continue
		}
		err := video.ReadFrames(ctx, f.path, video.ReadOptions{Start: s - base, End: e - base, Step: step, Width: l.Width, Height: l.Height},
			func(fr video.Frame) error {
				fr.Index += base
				return fn(fr)
			})
		f.done()
		if err != nil {
			if k < lastChunk {
				if g := <-next; g.done != nil {
					g.done()
				}
			}
			return err
		}
	}
	return nil
}

// ChunkURL presigns the GET of chunk k of movie m (for a page that decodes
// whole chunks, or a download).
func (p *Provider) ChunkURL(ctx context.Context, m domain.Movie, k int, expires time.Duration) (string, error) {
	l, err := LayoutOf(m)
	if err != nil {
		return "", err
	}
	if k < 0 || k >= l.Chunks() {
		return "", fmt.Errorf("media: chunk %d of %d", k, l.Chunks())
	}
	return p.o.Objects.PresignGet(ctx, ChunkKey(l.MovieID, k), expires)
}

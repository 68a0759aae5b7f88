package media

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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
	lru   *list.List // of *cached, most recent first
	bytes int
	busy  map[cacheKey]*sync.WaitGroup
}

type cacheKey struct {
	movie string
	chunk int
}

type cached struct {
	key    cacheKey
	images [][]byte
	size   int
}

// NewProvider returns a provider.
func NewProvider(o ProviderOptions) (*Provider, error) {
	if o.Objects == nil {
		return nil, errors.New("media: no objects")
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = 64 << 20
	}
	return &Provider{o: o, cache: map[cacheKey]*list.Element{}, lru: list.New(), busy: map[cacheKey]*sync.WaitGroup{}}, nil
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

// Image returns frame n of movie m as a JPEG, decoded from its chunk. A
// chunk is decoded whole once and its images are kept (bounded by
// CacheBytes), so stepping through a chunk decodes it once; concurrent
// requests for one chunk share one decode.
func (p *Provider) Image(ctx context.Context, m domain.Movie, n int) ([]byte, error) {
	l, err := LayoutOf(m)
	if err != nil {
		return nil, err
	}
	if n < 0 || n >= l.FrameCount {
		return nil, fmt.Errorf("media: frame %d of a movie of %d", n, l.FrameCount)
	}
	k, j := l.Locate(n)
	key := cacheKey{l.MovieID, k}
	for {
		p.mu.Lock()
		if el, ok := p.cache[key]; ok {
			p.lru.MoveToFront(el)
			imgs := el.Value.(*cached).images
			p.mu.Unlock()
			if j >= len(imgs) {
				return nil, fmt.Errorf("media: chunk %d of %s has %d frames, not %d", k, l.MovieID, len(imgs), j+1)
			}
			return imgs[j], nil
		}
		if wg, ok := p.busy[key]; ok {
			p.mu.Unlock()
			wg.Wait()
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			continue
		}
		wg := &sync.WaitGroup{}
		wg.Add(1)
		p.busy[key] = wg
		p.mu.Unlock()
		imgs, err := p.decodeImages(ctx, l, k)
		p.mu.Lock()
		delete(p.busy, key)
		if err == nil {
			p.put(&cached{key: key, images: imgs, size: sizeOf(imgs)})
		}
		p.mu.Unlock()
		wg.Done()
		if err != nil {
			return nil, err
		}
	}
}

func sizeOf(imgs [][]byte) int {
	s := 0
	for _, b := range imgs {
		s += len(b)
	}
	return s
}

// put adds c, evicting the least recent entries beyond the bound (p.mu held).
func (p *Provider) put(c *cached) {
	p.cache[c.key] = p.lru.PushFront(c)
	p.bytes += c.size
	for p.bytes > p.o.CacheBytes && p.lru.Len() > 1 {
		el := p.lru.Back()
		old := el.Value.(*cached)
		p.lru.Remove(el)
		delete(p.cache, old.key)
		p.bytes -= old.size
	}
}

// decodeImages decodes chunk k into one JPEG per frame (ffmpeg's mjpeg
// encoder at quality 2, full range: within 40 dB luma PSNR of the gray
// frames the tracer reads from the same chunk, tested).
func (p *Provider) decodeImages(ctx context.Context, l Layout, k int) ([][]byte, error) {
	path, done, err := p.fetch(ctx, l, k)
	if err != nil {
		return nil, err
	}
	defer done()
	dir, err := os.MkdirTemp(p.o.TempDir, "images-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin, err := video.FFmpegPath()
	if err != nil {
		return nil, err
	}
	in, err := video.InputArgs(path)
	if err != nil {
		return nil, err
	}
	args := append([]string{"-nostdin", "-hide_banner", "-v", "error"}, in...)
	args = append(args, "-an", "-vsync", "passthrough", "-vf", "scale=out_range=full,format=yuvj420p", "-c:v", "mjpeg", "-q:v", "2",
		"-f", "image2", filepath.Join(dir, "%06d.jpg"))
	cmd := exec.CommandContext(ctx, bin, args...)
	stderr := video.NewTail(2048)
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("media: decode chunk %d of %s: %w: %s", k, l.MovieID, err, stderr.String())
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.jpg"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	imgs := make([][]byte, 0, len(names))
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		imgs = append(imgs, b)
	}
	if want := min(l.ChunkFrames, l.FrameCount-k*l.ChunkFrames); len(imgs) != want {
		return nil, fmt.Errorf("media: chunk %d of %s decoded to %d frames, want %d", k, l.MovieID, len(imgs), want)
	}
	return imgs, nil
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

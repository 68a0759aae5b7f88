package media

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/video"
)

// A chunk's JPEGs are made on demand, from the frame asked for on: a cold
// frame j costs decoding frames 0..j of its chunk and encoding frame j (not
// the whole chunk's JPEGs, which cost ~1 s at 1080p); the same ffmpeg goes
// on encoding j+1.. (the frames a viewer steps to next) into the cache
// while frame j is already answered. A frame before an earlier run's start
// starts a run of its own. Runs outlive the request that started them (up
// to imageRunTimeout), so a cancelled request does not waste the decode.

const (
	// imageRunTimeout bounds one run (a chunk's decode and encodes).
	imageRunTimeout = 2 * time.Minute
	// joinAhead: a request waits for a running decode that will reach its
	// frame within this many encodes, else it starts its own from its frame.
	joinAhead = 8
)

// chunkImages is a cached chunk: its frames' JPEGs as far as made.
type chunkImages struct {
	key     cacheKey
	images  [][]byte // nil: not made (yet)
	size    int
	runs    []*imageRun
	changed chan struct{} // closed (and replaced) when an image arrives or a run ends
	evicted bool
}

// imageRun is one ffmpeg making the chunk's JPEGs from frame start on.
type imageRun struct {
	start, next int // next: the frame it makes next
	done        bool
	err         error
}

// Image returns frame n of movie m as a JPEG, decoded from its chunk (see
// above; kept in an LRU bounded by CacheBytes; concurrent requests for
// nearby frames of one chunk share one decode).
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
	p.mu.Lock()
	c := p.chunk(key, min(l.ChunkFrames, l.FrameCount-k*l.ChunkFrames))
	var mine *imageRun
	for {
		if img := c.images[j]; img != nil {
			p.lru.MoveToFront(p.cache[key])
			p.mu.Unlock()
			return img, nil
		}
		if mine != nil && mine.done {
			p.mu.Unlock()
			if mine.err != nil {
				return nil, mine.err
			}
			return nil, fmt.Errorf("media: chunk %d of %s ended before its frame %d", k, l.MovieID, j)
		}
		if mine == nil {
			for _, r := range c.runs {
				if r.start <= j && j-r.next <= joinAhead {
					mine = r
					break
				}
			}
			if mine == nil {
				mine = &imageRun{start: j, next: j}
				c.runs = append(c.runs, mine)
				go p.runImages(l, k, c, mine)
			}
		}
		changed := c.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		p.mu.Lock()
	}
}

// chunk returns the cache entry of key, made with room for frames images
// (p.mu held).
func (p *Provider) chunk(key cacheKey, frames int) *chunkImages {
	if el, ok := p.cache[key]; ok {
		return el.Value.(*chunkImages)
	}
	c := &chunkImages{key: key, images: make([][]byte, frames), changed: make(chan struct{})}
	p.cache[key] = p.lru.PushFront(c)
	return c
}

// add stores image i of c and evicts the least recent chunks beyond the
// bound (p.mu held).
func (p *Provider) add(c *chunkImages, i int, img []byte) {
	if c.images[i] == nil {
		c.images[i] = img
		if !c.evicted {
			c.size += len(img)
			p.bytes += len(img)
		}
	}
	for p.bytes > p.o.CacheBytes && p.lru.Len() > 1 {
		el := p.lru.Back()
		old := el.Value.(*chunkImages)
		if old == c {
			break
		}
		p.lru.Remove(el)
		delete(p.cache, old.key)
		old.evicted = true
		p.bytes -= old.size
	}
	c.notify()
}

func (c *chunkImages) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// runImages runs r: decodes chunk k and stores the JPEGs of frames r.start
// on as ffmpeg writes them.
func (p *Provider) runImages(l Layout, k int, c *chunkImages, r *imageRun) {
	ctx, cancel := context.WithTimeout(context.Background(), imageRunTimeout)
	defer cancel()
	err := p.encodeFrom(ctx, l, k, r.start, func(i int, img []byte) bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		if i >= len(c.images) {
			return false
		}
		p.add(c, i, img)
		r.next = i + 1
		return true
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil && r.next != len(c.images) {
		err = fmt.Errorf("media: chunk %d of %s decoded to %d frames, want %d", k, l.MovieID, r.next, len(c.images))
	}
	r.done, r.err = true, err
	for i, x := range c.runs {
		if x == r {
			c.runs = append(c.runs[:i], c.runs[i+1:]...)
			break
		}
	}
	c.notify()
}

// encodeFrom decodes chunk k and calls put with each JPEG from frame start
// on (ffmpeg's mjpeg encoder at quality 2, full range: within 40 dB luma
// PSNR of the gray frames the tracer reads from the same chunk, tested),
// as soon as ffmpeg has written it; put returning false stops the decode.
func (p *Provider) encodeFrom(ctx context.Context, l Layout, k, start int, put func(i int, img []byte) bool) error {
	path, done, err := p.fetch(ctx, l, k)
	if err != nil {
		return err
	}
	defer done()
	bin, err := video.FFmpegPath()
	if err != nil {
		return err
	}
	in, err := video.InputArgs(path)
	if err != nil {
		return err
	}
	args := append([]string{"-nostdin", "-hide_banner", "-v", "error"}, in...)
	args = append(args, "-an", "-vsync", "passthrough",
		"-vf", "select=gte(n\\,"+strconv.Itoa(start)+"),scale=out_range=full,format=yuvj420p",
		"-c:v", "mjpeg", "-q:v", "2", "-f", "image2pipe", "pipe:1")
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	cmd := exec.CommandContext(ctx, bin, args...)
	stderr := video.NewTail(2048)
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	br := bufio.NewReaderSize(out, 1<<20)
	stopped := false
	for i := start; ; i++ {
		img, err := nextJPEG(br)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			stop()
			_ = cmd.Wait()
			return fmt.Errorf("media: images of chunk %d of %s: %w", k, l.MovieID, err)
		}
		if !put(i, img) {
			stopped = true
			stop()
			break
		}
	}
	if err := cmd.Wait(); err != nil && !stopped {
		return fmt.Errorf("media: decode chunk %d of %s: %w: %s", k, l.MovieID, err, stderr.String())
	}
	return nil
}

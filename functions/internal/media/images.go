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
// frame j costs decoding its chunk from the keyframe at or before j (an
// encoded chunk has one every KeyFrameInterval frames; a remuxed one only
// at frame 0) and encoding frame j (not the whole chunk's JPEGs, which cost
// ~1 s at 1080p); the same ffmpeg goes
// on encoding j+1.. (the frames a viewer steps to next) into the cache
// while frame j is already answered, but only warmAhead frames past the
// last frame asked of the run (or found in the cache within its reach):
// then it stops reading, ffmpeg blocks on its pipe (no CPU), and a later
// request moves the horizon on. A run left waiting for runIdle is stopped,
// and at most maxWaitingRuns wait at once (the oldest is stopped first), so
// after a jump the old place's decoder does not compete with the new one.
// A frame before an earlier run's start starts a run of its own; when the
// frame after it is already made (a viewer stepping backwards), that run
// starts up to backAhead-1 frames earlier, so the next steps back are made
// by the same decode. Runs outlive the request that started them (up to
// imageRunTimeout), so a cancelled request does not waste the decode.

const (
	// imageRunTimeout bounds one run (a chunk's decode and encodes).
	imageRunTimeout = 2 * time.Minute
	// joinAhead: a request waits for a running decode that will reach its
	// frame within this many encodes, else it starts its own from its frame.
	joinAhead = 8
	// warmAhead: a run makes this many frames past the last one asked of
	// it, then waits (the page fetches 8 ahead).
	warmAhead = 12
	// backAhead: a run started for frame j while frame j+1 is made starts
	// at j-backAhead+1 (stepping backwards).
	backAhead = 8
	// runIdle: a run waiting this long for a request is stopped.
	runIdle = 15 * time.Second
	// maxWaitingRuns: runs kept waiting at once (each holds an ffmpeg with
	// its decoder's frames: ~140 MB of memory at 1080p).
	maxWaitingRuns = 2
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
	want        int // it makes frames before want, then waits
	wake        chan struct{}
	waitingAt   time.Time // when it began to wait (zero: making)
	stopping    bool      // told to stop: no request joins it
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
			if el, ok := p.cache[key]; ok && el.Value == c { // c may have been evicted meanwhile
				p.lru.MoveToFront(el)
			}
			if mine == nil {
				c.warm(j) // a step onto a made frame moves the horizon on
			}
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
				if !r.stopping && r.start <= j && j-r.next <= joinAhead {
					mine = r
					break
				}
			}
			if mine == nil {
				start := j
				if j+1 < len(c.images) && c.images[j+1] != nil {
					for start > max(0, j-backAhead+1) && c.images[start-1] == nil {
						start--
					}
				}
				mine = &imageRun{start: start, next: start, wake: make(chan struct{})}
				c.runs = append(c.runs, mine)
				p.runs = append(p.runs, mine)
				p.limitWaiting()
				go p.runImages(l, k, c, mine)
			}
			mine.ask(j)
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

// ask moves r's horizon to warmAhead frames past j (p.mu held).
func (r *imageRun) ask(j int) {
	if w := j + 1 + warmAhead; w > r.want {
		r.want = w
		r.signal()
	}
}

func (r *imageRun) signal() {
	close(r.wake)
	r.wake = make(chan struct{})
}

// warm moves on the horizon of a run that has made frame j or is about to
// (p.mu held).
func (c *chunkImages) warm(j int) {
	for _, r := range c.runs {
		if !r.stopping && r.start <= j && j <= r.next {
			r.ask(j)
		}
	}
}

// limitWaiting stops the runs waiting longest beyond maxWaitingRuns (p.mu
// held).
func (p *Provider) limitWaiting() {
	for {
		var oldest *imageRun
		waiting := 0
		for _, r := range p.runs {
			if r.stopping || r.waitingAt.IsZero() || r.next < r.want {
				continue
			}
			waiting++
			if oldest == nil || r.waitingAt.Before(oldest.waitingAt) {
				oldest = r
			}
		}
		if waiting <= maxWaitingRuns {
			return
		}
		oldest.stopping = true
		oldest.signal()
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
		for _, r := range old.runs {
			if r.next >= r.want { // waiting: its images would go nowhere
				r.stopping = true
				r.signal()
			}
		}
	}
	c.notify()
}

func (c *chunkImages) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// runImages runs r: decodes chunk k and stores the JPEGs of frames r.start
// on as ffmpeg writes them, up to its horizon, waiting there for more to be
// asked.
func (p *Provider) runImages(l Layout, k int, c *chunkImages, r *imageRun) {
	ctx, cancel := context.WithTimeout(context.Background(), imageRunTimeout)
	defer cancel()
	err := p.encodeFrom(ctx, l, k, r.start, func(i int, img []byte) bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		if i >= len(c.images) || r.stopping {
			return false
		}
		p.add(c, i, img)
		r.next = i + 1
		for r.next >= r.want && r.next < len(c.images) && !r.stopping {
			r.waitingAt = time.Now()
			p.limitWaiting()
			wake := r.wake
			p.mu.Unlock()
			idle := time.NewTimer(runIdle)
			select {
			case <-wake:
			case <-idle.C:
			case <-ctx.Done():
			}
			idle.Stop()
			p.mu.Lock()
			if r.next >= r.want && time.Since(r.waitingAt) >= runIdle || ctx.Err() != nil {
				r.stopping = true
			}
			r.waitingAt = time.Time{}
		}
		return !r.stopping
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil && !r.stopping && r.next != len(c.images) {
		err = fmt.Errorf("media: chunk %d of %s decoded to %d frames, want %d", k, l.MovieID, r.next, len(c.images))
	}
	r.done, r.err, r.stopping = true, err, true
	for i, x := range c.runs {
		if x == r {
			c.runs = append(c.runs[:i], c.runs[i+1:]...)
			break
		}
	}
	for i, x := range p.runs {
		if x == r {
			p.runs = append(p.runs[:i], p.runs[i+1:]...)
			break
		}
	}
	c.notify()
}

// fullRange makes a chunk's limited-range yuv420p (what both renditions
// are: the remux takes only yuv420p, the encode writes it) the full range
// a JPEG is read in, with a lookup table per plane: the same levels as
// swscale's scale=out_range=full (its JPEGs within 50 dB of this one's on a
// 1080p chunk) at about a third of its cost (~3 ms less per 1080p frame;
// docs/media.md, "Viewer latency"). Its output goes to the encoder as it is
// (yuv420p declared full range, -strict unofficial): asking for yuvj420p
// made ffmpeg insert a swscale conversion after it, which cost CPU and,
// after an input seek, expanded the range a second time.
const fullRange = "lutyuv=y='clip((val-16)*255/219,0,255)'" +
	":u='clip((val-128)*255/224+128,0,255)':v='clip((val-128)*255/224+128,0,255)'"

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
	// One decoding thread: a jump decodes at most KeyFrameInterval frames,
	// and frame threads cost more CPU (their contexts and frame buffers)
	// than they save on a shared or fractional CPU (docs/media.md,
	// "Viewer latency").
	args := []string{"-nostdin", "-hide_banner", "-v", "error", "-threads", "1"}
	filter := fullRange
	if l.Seek && start > 0 {
		// Frame start is at start/FrameRate: ffmpeg seeks to the keyframe
		// at or before half a frame earlier and drops the frames decoded
		// before that time (-accurate_seek, its default), so the first
		// image is frame start's.
		args = append(args, "-ss", strconv.FormatFloat((float64(start)-0.5)/l.FrameRate, 'f', 6, 64))
	} else if start > 0 {
		filter = "select=gte(n\\," + strconv.Itoa(start) + ")," + filter
	}
	args = append(append(args, in...), "-an", "-vsync", "passthrough", "-vf", filter,
		"-pix_fmt", "yuv420p", "-color_range", "pc", "-strict", "unofficial",
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

package main

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"
)

// A range (one ingest invocation) ends with the ingest's log record
// "ingest: range prepared" or "ingest: ready"; the recorder takes every
// counter there, so each range's figures are what happened since the
// previous one ended (its probe and plan included). The ranges run one at
// a time (one movie, each continued through the upload queue), so the
// windows are the invocations.

// rangeFigures are one range's measures.
type rangeFigures struct {
	From, To   int // frames [From, To)
	Chunks     int // chunks stored
	Remuxed    int // of which remuxed (when RemuxKnown: the last range's log does not say)
	RemuxKnown bool
	Took       time.Duration // the invocation's own wall time (its log's "took")
	Window     time.Duration // since the previous range ended (queue latency included)
	ChildCPU   time.Duration // user+system of the ffmpeg/ffprobe children that exited in it
	GoCPU      time.Duration // user+system of this whole process in it
	Peaks      peaks
	S3         s3Counts
	ChildMaxKB int64 // getrusage's ru_maxrss of the children so far (whole run)
}

type recorder struct {
	mu       sync.Mutex
	s3       *s3Counter
	samp     *sampler
	last     time.Time
	lastKid  time.Duration
	lastSelf time.Duration
	ranges   []rangeFigures
	planned  map[string]string // the "rendition planned" record's attributes
	done     chan struct{}     // closed at "ingest: ready"
	doneOnce sync.Once
	warn     slog.Handler
}

func newRecorder(s3 *s3Counter, samp *sampler) *recorder {
	r := &recorder{s3: s3, samp: samp, done: make(chan struct{}), planned: map[string]string{},
		warn: slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})}
	r.start()
	return r
}

func rusage(who int) (time.Duration, int64) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(who, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Maxrss
}

// start begins the first window (after the upload: nothing is counted
// before it).
func (r *recorder) start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = time.Now()
	r.lastKid, _ = rusage(syscall.RUSAGE_CHILDREN)
	r.lastSelf, _ = rusage(syscall.RUSAGE_SELF)
	r.s3.take()
	r.samp.take()
}

func (r *recorder) endRange(rec slog.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	kid, kidMax := rusage(syscall.RUSAGE_CHILDREN)
	self, _ := rusage(syscall.RUSAGE_SELF)
	f := rangeFigures{Window: now.Sub(r.last), ChildCPU: kid - r.lastKid, GoCPU: self - r.lastSelf,
		Peaks: r.samp.take(), S3: r.s3.take(), ChildMaxKB: kidMax}
	if n := len(r.ranges); n > 0 {
		f.From = r.ranges[n-1].To
	}
	rec.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "from":
			f.From = int(a.Value.Int64())
		case "to", "frames":
			f.To = int(a.Value.Int64())
		case "chunks":
			f.Chunks = int(a.Value.Int64())
		case "remuxed":
			f.Remuxed, f.RemuxKnown = int(a.Value.Int64()), true
		case "took":
			f.Took = a.Value.Duration()
		}
		return true
	})
	r.ranges = append(r.ranges, f)
	r.last, r.lastKid, r.lastSelf = now, kid, self
}

func (r *recorder) figures() []rangeFigures {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]rangeFigures(nil), r.ranges...)
}

// The recorder is the stack's slog.Handler: it reads the ingest's records
// and passes warnings and errors on to stderr.
func (r *recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (r *recorder) Handle(ctx context.Context, rec slog.Record) error {
	switch rec.Message {
	case "ingest: range prepared":
		r.endRange(rec)
	case "ingest: ready":
		r.endRange(rec)
		r.doneOnce.Do(func() { close(r.done) })
	case "ingest: rendition planned":
		r.mu.Lock()
		rec.Attrs(func(a slog.Attr) bool { r.planned[a.Key] = a.Value.String(); return true })
		r.mu.Unlock()
	}
	if rec.Level >= slog.LevelWarn {
		return r.warn.Handle(ctx, rec)
	}
	return nil
}

func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

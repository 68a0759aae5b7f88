package tracer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/tracker"
	"github.com/movietrace/tracinglocks/functions/internal/video"
)

// Source says where a movie's video file can be read: a local path or an
// http(s) URL (a presigned S3 GET).
type Source interface {
	Locate(ctx context.Context, movie domain.Movie) (string, error)
}

// SourceFunc adapts a function to Source.
type SourceFunc func(ctx context.Context, movie domain.Movie) (string, error)

// Locate calls f.
func (f SourceFunc) Locate(ctx context.Context, movie domain.Movie) (string, error) {
	return f(ctx, movie)
}

// States keeps tracker states between the segments of a trace. A state's
// key names the movie, its tracing settings and the frame, and its content
// is a pure function of them, so a late or repeated Put is harmless.
type States interface {
	// Get returns the state saved under key, or ErrNoState.
	Get(ctx context.Context, key string) ([]byte, error)
	Put(ctx context.Context, key string, state []byte) error
}

// ErrNoState is States.Get's answer for a key with no state.
var ErrNoState = errors.New("tracer: no saved state")

// Frames reads a movie's frames from its rendition: the one frame provider
// (media.Provider), which the page's images come from too, so the frame N
// the tracer reads is the frame N the page shows.
type Frames interface {
	// ReadFrames calls fn with the gray frames of m in [o.Start, o.End)
	// every o.Step, at the rendition's size, with the movie's indexes.
	ReadFrames(ctx context.Context, m domain.Movie, o video.ReadOptions, fn func(video.Frame) error) error
}

// HasRendition reports whether the ingest prepared m's rendition (its row
// records the chunk size and the rendition's frame size).
func HasRendition(m domain.Movie) bool {
	return m.Video != nil && m.Video.ChunkFrames > 0 && m.Video.Width > 0 && m.Video.Height > 0 && m.FrameCount > 0
}

// VideoOptions configure the video tracer. At least one of Frames and
// Source is needed.
type VideoOptions struct {
	// Frames reads a movie that has a rendition (HasRendition): what the
	// product does for every ingested movie.
	Frames Frames
	// Source is where a movie without a rendition is read from (a file
	// decoded by ffmpeg: the tracer's own tests and benchmarks); nil: such
	// a movie cannot be traced.
	Source Source
	// States keeps checkpoints; nil keeps none, and a trace that does not
	// start at the trim start re-tracks from the trim start.
	States States
	// Params tune the tracker; zero fields take tracker.DefaultParams.
	Params tracker.Params
	// CheckpointEvery: a state is saved every this many traced frames
	// (default 100), so a continuation re-tracks at most that many frames
	// before its first new one.
	CheckpointEvery int
}

// Video is the real tracer: it reads the movie's frames from its rendition
// (Frames), or for a movie without one from its file through ffmpeg
// (video.ReadFrames on Source), and follows each marker with tracker.Tracker
// from where the user placed it, on the frame it was placed on, and restarts
// it on every key frame of it (the user's corrections; see keysOf).
//
// A trace that starts later than the trim start (a continuation or a
// retrace from a frame) restores the tracker's state from the last
// checkpoint at or before its start and re-tracks silently up to its first
// frame, so it emits exactly the points an uninterrupted trace would have.
type Video struct {
	o VideoOptions
}

var _ Tracer = (*Video)(nil)

// NewVideo returns the video tracer.
func NewVideo(o VideoOptions) (*Video, error) {
	if o.Source == nil && o.Frames == nil {
		return nil, errors.New("tracer: a video tracer needs its Frames or a Source")
	}
	if o.CheckpointEvery == 0 {
		o.CheckpointEvery = 100
	}
	if o.CheckpointEvery < 1 {
		return nil, fmt.Errorf("tracer: checkpoint interval %d", o.CheckpointEvery)
	}
	if _, _, err := tracker.New(o.Params, []byte{0}, 1, 1, nil); err != nil {
		return nil, err
	}
	return &Video{o: o}, nil
}

// Trace implements Tracer.
func (v *Video) Trace(ctx context.Context, movie domain.Movie, plan domain.TracePlan, emit func(domain.Frame) error) error {
	if plan.Frames == 0 {
		return nil
	}
	s := movie.Settings
	step := max(s.CaptureInterval, 1)
	key, first, last := s.Trim.Start, plan.FrameAt(0), plan.FrameAt(plan.Frames-1)
	if first < key || (first-key)%step != 0 {
		return fmt.Errorf("tracer: plan starts at frame %d, off the capture grid from %d every %d", first, key, step)
	}
	read, info, err := v.reader(ctx, movie)
	if err != nil {
		return err
	}
	if last >= info.FrameCount {
		return Safe(fmt.Sprintf("The trace goes to frame %d but the video has %d frames.", last, info.FrameCount),
			fmt.Errorf("tracer: plan ends at %d, video has %d frames", last, info.FrameCount))
	}
	w, h := info.Width, info.Height
	ks := keysOf(s, w, h)
	settings := v.settingsKey(movie, info, step)
	stateKey := func(frame int) string {
		return movie.ID + "/" + settings + "/" + ks.digest(frame) + "/" + strconv.Itoa(frame)
	}

	// Where to start tracking: the latest saved state before the plan's
	// first frame, else the key frame.
	var trk *tracker.Tracker
	start := key
	if first > key && v.o.States != nil {
		every := v.o.CheckpointEvery * step
		for cand := first - step; cand > key; cand = key + ((cand-key-1)/every)*every {
			data, err := v.o.States.Get(ctx, stateKey(cand))
			if errors.Is(err, ErrNoState) {
				continue
			}
			if err != nil {
				return fmt.Errorf("tracer: load state: %w", err)
			}
			if t, err := tracker.Restore(data); err == nil && t.Len() == ks.activeAt(cand) {
				trk, start = t, cand+step
				break
			}
		}
	}
	slots := ks.slots(start - 1)

	err = read(ctx, video.ReadOptions{Start: start, End: last + 1, Step: step, Width: w, Height: h},
		func(f video.Frame) error {
			var pts []tracker.Point
			var err error
			if trk == nil {
				trk, pts, err = tracker.New(v.o.Params, f.Gray, w, h, nil)
			} else {
				pts, err = trk.Step(f.Gray)
			}
			if err != nil {
				return err
			}
			// The key frames on this frame: a marker placed here starts, a
			// corrected one restarts from the correction.
			for _, k := range ks.at[f.Index] {
				var pt tracker.Point
				if j := slots[k.marker]; j >= 0 {
					pt, err = trk.Rekey(f.Gray, j, k.x, k.y)
				} else {
					pt, slots[k.marker], err = trk.Add(f.Gray, k.x, k.y)
					pts = append(pts, tracker.Point{})
				}
				if err != nil {
					return err
				}
				pts[slots[k.marker]] = pt
			}
			if v.o.States != nil && f.Index != key && ((f.Index-key)/step)%v.o.CheckpointEvery == 0 {
				if err := v.save(ctx, stateKey(f.Index), trk); err != nil {
					return err
				}
			}
			if f.Index < first {
				return nil // re-tracking up to the plan's first frame
			}
			return emit(toFrame(f.Index, s.Markers, slots, pts, w, h))
		})
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		var se *SafeError
		if errors.As(err, &se) {
			return err
		}
		if errors.Is(err, video.ErrNotVideo) || errors.Is(err, video.ErrTruncated) || errors.Is(err, video.ErrUnsupportedCodec) {
			return videoFailure(err)
		}
		return err
	}
	return nil
}

// reader returns how to read movie's frames and their size and count: from
// its rendition when it has one, else from its file (Source).
func (v *Video) reader(ctx context.Context, movie domain.Movie) (func(context.Context, video.ReadOptions, func(video.Frame) error) error, video.Info, error) {
	if HasRendition(movie) && v.o.Frames != nil {
		mv := movie.Video
		info := video.Info{FrameCount: movie.FrameCount, FrameRate: movie.FrameRate, Width: mv.Width, Height: mv.Height, Codec: mv.Codec}
		return func(ctx context.Context, o video.ReadOptions, fn func(video.Frame) error) error {
			return v.o.Frames.ReadFrames(ctx, movie, o, fn)
		}, info, nil
	}
	if v.o.Source == nil {
		return nil, video.Info{}, Safe("The movie's frames have not been prepared: upload its video again.",
			fmt.Errorf("tracer: movie %s has no rendition", movie.ID))
	}
	src, err := v.o.Source.Locate(ctx, movie)
	if err != nil {
		return nil, video.Info{}, Safe("The movie's video file could not be found.", err)
	}
	// The ingest probed the file once and stored what it found on the row;
	// probe again only for a row without it (ffprobe reads the whole file
	// to count its frames, over HTTP for a presigned source).
	var info video.Info
	if mv := movie.Video; mv != nil && mv.Width > 0 && mv.Height > 0 && movie.FrameCount > 0 {
		info = video.Info{FrameCount: movie.FrameCount, FrameRate: movie.FrameRate, Width: mv.Width, Height: mv.Height, Codec: mv.Codec}
	} else if info, err = video.Probe(ctx, src); err != nil {
		return nil, video.Info{}, videoFailure(err)
	}
	return func(ctx context.Context, o video.ReadOptions, fn func(video.Frame) error) error {
		// A read from a later frame (a continuation segment, a resumed
		// state, a trim) seeks to it instead of decoding every frame
		// before it, when the source's rate is constant; otherwise (or if
		// its headers cannot be read) it counts frames from 0.
		if o.Start > 0 {
			if timing, err := video.ProbeTiming(ctx, src); err == nil {
				o.Timing = timing
			}
		}
		return video.ReadFrames(ctx, src, o, fn)
	}, info, nil
}

func (v *Video) save(ctx context.Context, key string, trk *tracker.Tracker) error {
	data, err := trk.MarshalBinary()
	if err != nil {
		return err
	}
	if err := v.o.States.Put(ctx, key, data); err != nil {
		return fmt.Errorf("tracer: save state: %w", err)
	}
	return nil
}

// settingsKey is a digest of everything a tracker state depends on but the
// key frames (planKeys.digest adds those of the frames up to the state's).
func (v *Video) settingsKey(m domain.Movie, info video.Info, step int) string {
	h := sha256.New()
	fmt.Fprintf(h, "v3|%t|%s|%d|%d|%dx%d|%d|%s|%v|", HasRendition(m) && v.o.Frames != nil, m.ID, m.Settings.Trim.Start, step, info.Width, info.Height,
		info.FrameCount, info.Codec, v.o.Params)
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// toPixel maps a normalised coordinate to the tracker's pixel-center
// coordinate (the first pixel's center is 0).
func toPixel(u float64, size int) float64 {
	return min(max(u*float64(size)-0.5, 0), float64(size-1))
}

// toFrame is the frame's points: one per marker that has started by then
// (slots: its index among the tracker's points, -1 before its first key
// frame), in the order of the markers.
func toFrame(index int, markers []domain.Marker, slots []int, pts []tracker.Point, w, h int) domain.Frame {
	f := domain.Frame{Index: index, Points: make([]domain.Point, 0, len(markers))}
	for i, mk := range markers {
		if slots[i] < 0 {
			continue
		}
		p := pts[slots[i]]
		dp := domain.Point{MarkerID: mk.ID, Confidence: p.Confidence, Lost: p.Lost, Doubt: string(p.Doubt)}
		if !p.Lost {
			dp.PX, dp.PY = p.X+0.5, p.Y+0.5
			dp.X, dp.Y = min(dp.PX/float64(w), 1), min(dp.PY/float64(h), 1)
		}
		f.Points = append(f.Points, dp)
	}
	return f
}

// videoFailure turns a video error into a user-facing one.
func videoFailure(err error) error {
	switch {
	case errors.Is(err, video.ErrNotVideo):
		return Safe("The movie's file is not a video the tracer can read.", err)
	case errors.Is(err, video.ErrTruncated):
		return Safe("The movie's file is truncated: the tracer could not read all its frames.", err)
	case errors.Is(err, video.ErrUnsupportedCodec):
		var uc *video.UnsupportedCodecError
		if errors.As(err, &uc) {
			return Safe(fmt.Sprintf("The movie's codec %s is not supported.", uc.Codec), err)
		}
		return Safe("The movie's codec is not supported.", err)
	case errors.Is(err, video.ErrNoFrames):
		return Safe("The movie has no frames.", err)
	}
	return err
}

// EnvTracer chooses the tracer FromEnv builds: "video" (the default when
// a video source is given) or "synthetic".
const EnvTracer = envvar.Tracer

// FromEnv builds the product's tracer: the video tracer with o when o has
// Frames or a Source, unless TRACER=synthetic; the synthetic one
// (SyntheticFromEnv) otherwise. TRACER=video without either is an error.
func FromEnv(getenv func(string) string, o VideoOptions) (Tracer, error) {
	synthetic := func() (Tracer, error) {
		s, err := SyntheticFromEnv(getenv)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	switch getenv(EnvTracer) {
	case "synthetic":
		return synthetic()
	case "", "video":
		if o.Source == nil && o.Frames == nil {
			if getenv(EnvTracer) == "video" {
				return nil, fmt.Errorf("tracer: %s=video needs the movies bucket", EnvTracer)
			}
			return synthetic()
		}
		v, err := NewVideo(o)
		if err != nil {
			return nil, err
		}
		return v, nil
	default:
		return nil, fmt.Errorf("tracer: %s=%q must be video or synthetic", EnvTracer, getenv(EnvTracer))
	}
}

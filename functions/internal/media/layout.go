// Package media is the one frame provider: it alone knows how a movie's
// frames are stored, and every reader asks it. The ingest prepares the
// rendition (Prepare); the tracer reads gray frames from it (ReadFrames);
// the API serves a frame's image and a whole chunk from it (Image,
// ChunkURL).
//
// The rendition is CVAT's "video chunk" design: the uploaded file is
// decoded once and re-encoded into chunks of ChunkFrames frames, each a
// short keyframe-led H.264 MP4 (yuv420p, colour) that decodes on its own,
// stored under the movie's prefix (frames/<movieId>/). What was decided is
// recorded on the movie's row when the ingest completes (domain.Video:
// chunk size, the rendition's size; the movie's FrameCount and FrameRate),
// and read from there.
//
// Frame N is the N-th frame the decoder outputs from the upload, counting
// from 0 (ffmpeg's passthrough sync: no frame dropped or duplicated, in a
// variable-rate file too), shown upright (the display matrix applied, as
// ffmpeg's autorotate does) with square pixels (the width scaled by the
// sample aspect ratio), then rounded down to even sizes (yuv420p). In the
// rendition, frame N is frame N mod ChunkFrames of chunk N / ChunkFrames, at
// the constant time N / FrameRate: a variable-rate upload is put on that
// constant timeline by decode index (its own timestamps are not kept).
package media

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/video"
)

// DefaultChunkFrames is the chunk size of new renditions: 60 frames (2 s
// at 30 fps). At most frames/60 + 1 objects are written per movie, and a
// frame is reached by decoding at most 60 frames of one chunk.
const DefaultChunkFrames = 60

// ChunkType is a chunk's content type.
const ChunkType = "video/mp4"

// ChunkPrefix is the prefix of a movie's chunks (under the movie's frames
// prefix, which deletion removes).
func ChunkPrefix(movieID string) string { return s3store.FramesPrefix + movieID + "/chunks/" }

// ChunkKey is the key of chunk k of a movie.
func ChunkKey(movieID string, k int) string {
	return fmt.Sprintf("%s%08d.mp4", ChunkPrefix(movieID), k)
}

// DecisionKey is the key of a movie's Decision record (decision.go),
// beside its chunks under the movie's frames prefix, which deletion
// removes; DecisionType its content type.
func DecisionKey(movieID string) string { return s3store.FramesPrefix + movieID + "/decision.json" }

const DecisionType = "application/json"

// Layout is where a ready movie's frames are: read from its row.
type Layout struct {
	MovieID       string
	FrameCount    int
	ChunkFrames   int
	Width, Height int
	// FrameRate is the movie's constant rate: frame i of an encoded
	// (x264) chunk is at the time i / FrameRate from the chunk's start.
	FrameRate float64
	// Seek: the chunks are encoded (domain.RenditionX264), their
	// timestamps exactly i / FrameRate, so a decode of frame i can start
	// at the keyframe at or before it (ffmpeg's input seek, which reads
	// the keyframes from the chunk's index) instead of the chunk's first
	// frame. Remuxed chunks keep the upload's timestamps and are decoded
	// from their start.
	Seek bool
}

// LayoutOf reads a movie's layout from its row; an error when the movie
// has no rendition (not ingested, or ingested by an older version).
func LayoutOf(m domain.Movie) (Layout, error) {
	v := m.Video
	if v == nil || v.ChunkFrames < 1 || v.Width < 1 || v.Height < 1 || m.FrameCount < 1 {
		return Layout{}, fmt.Errorf("media: movie %s has no rendition", m.ID)
	}
	return Layout{MovieID: m.ID, FrameCount: m.FrameCount, ChunkFrames: v.ChunkFrames, Width: v.Width, Height: v.Height,
		FrameRate: m.FrameRate, Seek: v.Rendition == domain.RenditionX264 && m.FrameRate > 0}, nil
}

// Chunks is the number of chunks.
func (l Layout) Chunks() int { return (l.FrameCount + l.ChunkFrames - 1) / l.ChunkFrames }

// Locate returns the chunk of frame n and its index in the chunk.
func (l Layout) Locate(n int) (chunk, offset int) { return n / l.ChunkFrames, n % l.ChunkFrames }

// parseSegmentList reads the segment muxer's CSV list (one line per
// finished segment: "name,start,end") and returns the chunk numbers of its
// complete lines, in order. A last line without its newline is not yet
// complete and is left out.
func parseSegmentList(data string) ([]int, error) {
	var out []int
	for {
		line, rest, found := strings.Cut(data, "\n")
		if !found {
			return out, nil
		}
		data = rest
		name, _, _ := strings.Cut(strings.TrimSpace(line), ",")
		if name == "" {
			continue
		}
		num, ok := strings.CutPrefix(name, "c")
		num, ok2 := strings.CutSuffix(num, ".mp4")
		if !ok || !ok2 || len(num) != 9 {
			return nil, fmt.Errorf("media: segment list entry %.40q", name)
		}
		k, err := strconv.Atoi(num)
		if err != nil || k < 0 {
			return nil, fmt.Errorf("media: segment list entry %.40q", name)
		}
		out = append(out, k)
	}
}

// segmentName is the local file name of chunk k (what parseSegmentList reads back).
func segmentName(k int) string { return fmt.Sprintf("c%09d.mp4", k) }

// RenditionSize is the size every frame of a movie is prepared at: the
// stream's size as the probe reads it (its first frame's), shown upright
// (a rotation of 90 or 270 swaps the sides), the width scaled by the
// sample aspect ratio (square pixels; the height of a rotated frame, whose
// pixels then are tall), each side rounded down to even (yuv420p), at
// least 2.
func RenditionSize(info video.Info) (width, height int) {
	w, h := info.Width, info.Height
	num, den := info.SampleAspect[0], info.SampleAspect[1]
	if num <= 0 || den <= 0 {
		num, den = 1, 1
	}
	if info.Rotation == 90 || info.Rotation == 270 {
		// Upright, the stored rows are columns: the pixel aspect inverts
		// (as ffmpeg's transpose sets it), and the new width is scaled.
		w, h = h, w
		num, den = den, num
	}
	w = int(int64(w) * int64(num) / int64(den))
	return max(w/2*2, 2), max(h/2*2, 2)
}

package ingest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/video"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// part writes H.264 frames from..from+n-1 (videotest.DrawIndex) at a size to path.
func part(t *testing.T, path string, width, height, from, n int, x264 ...string) {
	t.Helper()
	err := videotest.Encode(t.Context(), path, videotest.Options{Width: width, Height: height, FrameRate: 10, Frames: n,
		Codec: videotest.H264, Extra: x264}, func(i int, gray []byte) { videotest.DrawIndex(width, height, from+i, gray) })
	if err != nil {
		t.Fatal(err)
	}
}

// A stream whose frame size changes midway (30 frames at 96x64, then 30 at
// 128x96) is ingested whole, in ranges of 20 frames, every frame at the
// first frame's size (the second part scaled), frame k showing k:
//   - two MPEG-TS recordings joined byte for byte (their timestamps start
//     again at the join): encoded, each later range decoding from frame 0
//     (MPEG-TS is not indexed: no seek);
//   - an MP4 whose H.264 SPS changes at a keyframe (each part's SPS in its
//     packets, joined by the concat demuxer): a GOP of 10, closed, which
//     would be remuxed but for the size change; encoded, later ranges
//     seeking.
func TestIngestOfAStreamWhoseResolutionChanges(t *testing.T) {
	dir := t.TempDir()
	tsA, tsB, joinedTS := filepath.Join(dir, "a.ts"), filepath.Join(dir, "b.ts"), filepath.Join(dir, "joined.ts")
	part(t, tsA, 96, 64, 0, 30, "-g", "10", "-f", "mpegts")
	part(t, tsB, 128, 96, 30, 30, "-g", "10", "-f", "mpegts")
	a, err := os.ReadFile(tsA)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(tsB)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(joinedTS, append(a, b...), 0o600); err != nil {
		t.Fatal(err)
	}
	mpA, mpB, joinedMP4 := filepath.Join(dir, "a.mp4"), filepath.Join(dir, "b.mp4"), filepath.Join(dir, "joined.mp4")
	sps := append([]string{"-x264-params", "repeat-headers=1"}, cameraGOP...)
	part(t, mpA, 96, 64, 0, 30, sps...)
	part(t, mpB, 128, 96, 30, 30, sps...)
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte("file '"+mpA+"'\nfile '"+mpB+"'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-f", "concat", "-safe", "0", "-i", list, "-c", "copy", joinedMP4).CombinedOutput(); err != nil {
		t.Fatalf("concat: %v %s", err, out)
	}
	for _, c := range []struct{ name, path string }{{"mpegts", joinedTS}, {"mp4-sps", joinedMP4}} {
		t.Run(c.name, func(t *testing.T) {
			info, err := video.Probe(t.Context(), c.path)
			if err != nil || info.Width != 96 || info.Height != 64 || info.FrameCount != 60 {
				t.Fatalf("probe %+v %v", info, err)
			}
			if c.name == "mp4-sps" {
				// The size change is what keeps it from the remux.
				if plan := media.PlanRendition(t.Context(), c.path, info, 10); plan.Copy != nil {
					t.Fatalf("remuxed: %+v", plan.Copy)
				} else {
					t.Logf("encoded: %s", plan.Reason)
				}
			}
			data, err := os.ReadFile(c.path)
			if err != nil {
				t.Fatal(err)
			}
			e, sent := rangedEnv(t)
			e.upload("res1", data)
			if resp := e.handle(e.receive()); len(resp.BatchItemFailures) != 0 {
				t.Fatalf("%+v\n%s", resp, e.logs)
			}
			for i := 0; e.get("res1").Status == domain.StatusAwaitingUpload; i++ {
				if i > 10 {
					t.Fatalf("not ready after %d ranges: %+v", i, e.get("res1").Progress)
				}
				if resp := e.handle(continuation("res1")); len(resp.BatchItemFailures) != 0 {
					t.Fatalf("%+v\n%s", resp, e.logs)
				}
			}
			m := e.get("res1")
			if m.Status != domain.StatusReady || m.FrameCount != 60 || m.Video.Width != 96 || m.Video.Height != 64 ||
				m.Video.Rendition != domain.RenditionX264 || m.Video.ChunkFrames != 10 || len(*sent) != 2 {
				t.Fatalf("%s %q: %d frames, video %+v, %d continuations", m.Status, m.IngestFailure, m.FrameCount, m.Video, len(*sent))
			}
			p, err := media.NewProvider(media.ProviderOptions{Objects: e.files})
			if err != nil {
				t.Fatal(err)
			}
			next := 0
			err = p.ReadFrames(t.Context(), m, video.ReadOptions{}, func(f video.Frame) error {
				if f.Index != next || f.Width != 96 || f.Height != 64 {
					t.Fatalf("frame %d (%dx%d) read where %d was expected", f.Index, f.Width, f.Height, next)
				}
				if got := videotest.IndexOf(f.Gray, f.Width); got != f.Index {
					t.Fatalf("frame %d shows frame %d", f.Index, got)
				}
				next++
				return nil
			})
			if err != nil || next != 60 {
				t.Fatalf("read %d of 60 frames: %v", next, err)
			}
			// Every chunk is at the rendition's size.
			for k := range 6 {
				url, err := e.files.PresignGet(t.Context(), media.ChunkKey("res1", k), time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				if ci, err := video.Probe(t.Context(), url); err != nil || ci.Width != 96 || ci.Height != 64 || ci.FrameCount != 10 {
					t.Fatalf("chunk %d: %+v %v", k, ci, err)
				}
			}
		})
	}
}

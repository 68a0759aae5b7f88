package videotest_test

import (
	"bytes"
	"image"
	"image/jpeg"
	"path/filepath"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// Every index DrawIndex writes is read back by IndexOf, at frame sizes
// from 7x3 (odd widths too), and after a lossy JPEG of it, read by JPEGLuma.
func TestDrawIndexReadsBack(t *testing.T) {
	for _, size := range [][2]int{{96, 64}, {7, 3}, {33, 17}} {
		w, h := size[0], size[1]
		gray := make([]byte, w*h)
		for i := range videotest.IndexFrames {
			videotest.DrawIndex(w, h, i, gray)
			if got := videotest.IndexOf(gray, w); got != i {
				t.Fatalf("%dx%d: index %d read as %d", w, h, i, got)
			}
		}
	}
	gray := make([]byte, 96*64)
	for _, i := range []int{0, 1, 27, 28, 29, 400, videotest.IndexFrames - 1} {
		videotest.DrawIndex(96, 64, i, gray)
		var buf bytes.Buffer
		img := &image.Gray{Pix: gray, Stride: 96, Rect: image.Rect(0, 0, 96, 64)}
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 50}); err != nil {
			t.Fatal(err)
		}
		luma, w, h, err := videotest.JPEGLuma(buf.Bytes())
		if err != nil || w != 96 || h != 64 || len(luma) != w*h {
			t.Fatalf("JPEGLuma: %dx%d, %d bytes, %v", w, h, len(luma), err)
		}
		if got := videotest.IndexOf(luma, w); got != i {
			t.Fatalf("index %d read from its JPEG as %d", i, got)
		}
		if p := videotest.PSNR(luma, gray); p < 30 {
			t.Fatalf("index %d: the JPEG's luma is %.1f dB from the frame", i, p)
		}
	}
}

func TestIndexOfAndJPEGLumaOfGarbage(t *testing.T) {
	if got := videotest.IndexOf(nil, 4); got != -1 {
		t.Fatalf("the index of no frame: %d", got)
	}
	if got := videotest.IndexOf(make([]byte, 6), 1); got != -1 {
		t.Fatalf("the index of a frame with no right half: %d", got)
	}
	if _, _, _, err := videotest.JPEGLuma([]byte("not a JPEG")); err == nil {
		t.Fatal("a text decoded as a JPEG")
	}
}

// An encoder ffmpeg lacks fails with ffmpeg's own words.
func TestTranscodeFailsWithFFmpegsMessage(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.mkv")
	if err := videotest.Encode(t.Context(), src, videotest.Options{Width: 32, Height: 16, FrameRate: 5, Frames: 2, Codec: videotest.FFV1},
		func(i int, gray []byte) { videotest.DrawIndex(32, 16, i, gray) }); err != nil {
		t.Fatal(err)
	}
	_, err := videotest.Transcode(t.Context(), src, dir, videotest.Foreign{Codec: "none", Encoder: "no-such-encoder", Ext: ".avi"})
	if err == nil || !strings.Contains(err.Error(), "no-such-encoder") {
		t.Fatalf("%v", err)
	}
}

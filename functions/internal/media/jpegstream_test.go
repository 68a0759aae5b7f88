package media

import (
	"bufio"
	"bytes"
	"errors"
	"image/jpeg"
	"io"
	"os/exec"
	"strconv"
	"testing"
)

// ffmpegJPEGs is what the provider reads: ffmpeg's image2pipe of mjpeg.
func ffmpegJPEGs(t *testing.T, frames int) []byte {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=96x64:rate=10",
		"-frames:v", strconv.Itoa(frames), "-vf", "scale=out_range=full,format=yuvj420p", "-c:v", "mjpeg", "-q:v", "2", "-f", "image2pipe", "pipe:1").Output()
	if err != nil {
		t.Fatalf("ffmpeg: %v", err)
	}
	return out
}

func TestNextJPEGSplitsFFmpegsImages(t *testing.T) {
	stream := ffmpegJPEGs(t, 5)
	r := bufio.NewReader(bytes.NewReader(stream))
	total := 0
	for i := range 5 {
		img, err := nextJPEG(r)
		if err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
		if _, err := jpeg.Decode(bytes.NewReader(img)); err != nil {
			t.Fatalf("image %d does not decode: %v", i, err)
		}
		total += len(img)
	}
	if _, err := nextJPEG(r); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last image: %v, want io.EOF", err)
	}
	if total != len(stream) {
		t.Fatalf("the images hold %d of the stream's %d bytes", total, len(stream))
	}
}

func TestNextJPEGRefusesGarbage(t *testing.T) {
	one := ffmpegJPEGs(t, 1)
	first, err := nextJPEG(bufio.NewReader(bytes.NewReader(one)))
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{
		"not a JPEG":           []byte("GIF89a....."),
		"one byte":             {0xFF},
		"truncated header":     first[:20],
		"truncated scan":       first[:len(first)-2],
		"garbage after SOI":    {0xFF, 0xD8, 0x12, 0x34},
		"short segment length": {0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01},
		"SOI inside an image":  {0xFF, 0xD8, 0xFF, 0xD8},
	} {
		if img, err := nextJPEG(bufio.NewReader(bytes.NewReader(in))); err == nil || errors.Is(err, io.EOF) {
			t.Errorf("%s: %d bytes, %v; want an error", name, len(img), err)
		}
	}
	if _, err := nextJPEG(bufio.NewReader(bytes.NewReader(nil))); !errors.Is(err, io.EOF) {
		t.Errorf("empty stream: %v, want io.EOF", err)
	}
}

func FuzzNextJPEG(f *testing.F) {
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0x01, 0xFF, 0x00, 0xFF, 0xD0, 0xFF, 0xD9})
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xD9, 0xFF, 0xD8})
	f.Add([]byte("not a jpeg"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bufio.NewReader(bytes.NewReader(in))
		read := 0
		for range 100 {
			img, err := nextJPEG(r)
			if err != nil {
				return
			}
			// An image is the next bytes of the stream, from SOI to EOI.
			if !bytes.Equal(img, in[read:read+len(img)]) || !bytes.HasPrefix(img, []byte{0xFF, 0xD8}) || !bytes.HasSuffix(img, []byte{0xFF, 0xD9}) {
				t.Fatalf("image % x is not the stream's next bytes from SOI to EOI", img)
			}
			read += len(img)
		}
	})
}

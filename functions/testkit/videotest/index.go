package videotest

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"math"
)

// IndexFrames is how many frame indexes DrawIndex can write: 28 levels a
// half.
const IndexFrames = 28 * 28

// DrawIndex fills a width x height gray frame (row-major) with its index i
// (0 <= i < IndexFrames), written in the means of its halves: the left
// half's brightness is 20 + 8*(i%28), the right half's 20 + 8*(i/28), each
// with a texture of +-6. Neighbouring indexes differ by 8 levels, so a
// frame scaled, lossily encoded or converted to colour and back still shows
// its index (IndexOf). The texture averages out over a frame of a few
// pixels a side (7x3 is tested; 2x1 is too small).
func DrawIndex(width, height, i int, gray []byte) {
	l, r := 20+8*(i%28), 20+8*(i/28)
	for y := range height {
		for x := range width {
			v := l
			if x >= width/2 {
				v = r
			}
			gray[y*width+x] = byte(v + (x*5+y*3)%13 - 6)
		}
	}
}

// IndexOf reads the index DrawIndex wrote into gray, a frame width pixels
// wide, from the means of its halves.
func IndexOf(gray []byte, width int) int {
	var sum, n [2]int
	for p, v := range gray {
		half := 0
		if p%width >= width/2 {
			half = 1
		}
		sum[half] += int(v)
		n[half]++
	}
	if n[0] == 0 || n[1] == 0 {
		return -1
	}
	l := (float64(sum[0])/float64(n[0]) - 20) / 8
	r := (float64(sum[1])/float64(n[1]) - 20) / 8
	return int(math.Round(r))*28 + int(math.Round(l))
}

// JPEGLuma decodes a JPEG (a served frame image) and returns its luma
// plane, row-major without padding, and its size.
func JPEGLuma(jpg []byte) (luma []byte, width, height int, err error) {
	img, err := jpeg.Decode(bytes.NewReader(jpg))
	if err != nil {
		return nil, 0, 0, err
	}
	var plane []byte
	var stride int
	switch m := img.(type) {
	case *image.YCbCr:
		plane, stride = m.Y, m.YStride
	case *image.Gray:
		plane, stride = m.Pix, m.Stride
	default:
		return nil, 0, 0, fmt.Errorf("videotest: a %T JPEG, not YCbCr or gray", img)
	}
	b := img.Bounds()
	width, height = b.Dx(), b.Dy()
	luma = make([]byte, 0, width*height)
	for y := range height {
		luma = append(luma, plane[y*stride:y*stride+width]...)
	}
	return luma, width, height, nil
}

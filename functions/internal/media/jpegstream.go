package media

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// maxJPEG bounds one image read from ffmpeg's image2pipe (a q 2 JPEG of a
// 4K frame is a few MB).
const maxJPEG = 64 << 20

// nextJPEG reads one JPEG from a stream of concatenated JPEGs (ffmpeg's
// image2pipe of mjpeg): SOI, marker segments (each with its length), and
// after a start of scan the entropy-coded data, in which a 0xFF byte is
// followed by 0x00 (a stuffed byte), 0xD0-0xD7 (a restart marker) or 0xFF
// (fill); any other marker ends the scan (EOI ends the image). It returns
// io.EOF at a clean end of the stream, and an error for anything else
// that is not a whole JPEG.
func nextJPEG(r *bufio.Reader) ([]byte, error) {
	var out []byte
	get := func() (byte, error) {
		b, err := r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if len(out) >= maxJPEG {
			return 0, fmt.Errorf("an image of more than %d bytes", maxJPEG)
		}
		out = append(out, b)
		return b, nil
	}
	first, err := r.ReadByte()
	if err != nil {
		return nil, err // io.EOF: no more images
	}
	out = append(out, first)
	if second, err := get(); err != nil || first != 0xFF || second != 0xD8 {
		if err != nil {
			return nil, err
		}
		return nil, errors.New("not a JPEG (no start of image)")
	}
	inScan := false
	for {
		b, err := get()
		if err != nil {
			return nil, err
		}
		if b != 0xFF {
			if inScan {
				continue
			}
			return nil, fmt.Errorf("byte %#x where a marker was expected", b)
		}
		code, err := get()
		for err == nil && code == 0xFF { // fill bytes
			code, err = get()
		}
		if err != nil {
			return nil, err
		}
		switch {
		case inScan && (code == 0x00 || (code >= 0xD0 && code <= 0xD7)):
			continue // stuffed byte or restart marker inside the scan
		case code == 0xD9:
			return out, nil
		case code == 0x01 || (code >= 0xD0 && code <= 0xD7):
			continue // markers without a length
		case code == 0x00 || code == 0xD8:
			return nil, fmt.Errorf("marker %#x out of place", code)
		}
		hi, err := get()
		if err != nil {
			return nil, err
		}
		lo, err := get()
		if err != nil {
			return nil, err
		}
		n := int(hi)<<8 | int(lo)
		if n < 2 {
			return nil, fmt.Errorf("segment %#x of length %d", code, n)
		}
		for range n - 2 {
			if _, err := get(); err != nil {
				return nil, err
			}
		}
		inScan = code == 0xDA
	}
}

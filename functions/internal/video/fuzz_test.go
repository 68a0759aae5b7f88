package video

import (
	"errors"
	"math"
	"testing"
)

// FuzzParseTiming: whatever ffprobe prints, a timing is either the zero
// Timing (do not seek) or a usable rate and a finite, non-negative offset.
func FuzzParseTiming(f *testing.F) {
	f.Add([]byte(`{"streams":[{"r_frame_rate":"30000/1001","avg_frame_rate":"30000/1001","start_time":"0.100000"}],"format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","start_time":"0.000000"}}`))
	f.Add([]byte(`{"streams":[{"r_frame_rate":"90000/1","avg_frame_rate":"0/0","disposition":{"attached_pic":1}},{"r_frame_rate":"24/1","avg_frame_rate":"24/1","start_time":"0"}],"format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","start_time":"0"}}`))
	f.Add([]byte(`{"streams":[{"r_frame_rate":"1e308/1e-308","avg_frame_rate":"NaN","start_time":"-Inf"}],"format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","start_time":"1e400"}}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tm, err := parseTiming(data)
		if err != nil {
			if tm != (Timing{}) {
				t.Fatalf("a timing with an error: %+v", tm)
			}
			return
		}
		if tm == (Timing{}) {
			return
		}
		if !(tm.Rate > 0) || tm.Rate > MaxFrameRate || math.IsNaN(tm.Offset) || math.IsInf(tm.Offset, 0) || tm.Offset < 0 {
			t.Fatalf("an impossible timing %+v from %q", tm, data)
		}
	})
}

// FuzzClassify: ffmpeg's error output maps to one of the package's errors
// or to nil, never to anything else.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"", "file.mp4: Invalid data found when processing input", "moov atom not found",
		"Decoder (codec hevc) not found for input stream #0:0", "partial file", "error reading header", "Unsupported codec with id 0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stderr string) {
		switch err := classify(stderr); {
		case err == nil, errors.Is(err, ErrTruncated), errors.Is(err, ErrUnsupportedCodec), errors.Is(err, ErrNotVideo):
		default:
			t.Fatalf("classify(%q) = %v", stderr, err)
		}
	})
}

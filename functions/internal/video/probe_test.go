package video

import (
	"errors"
	"math"
	"strings"
	"testing"
)

const sampleProbe = `{"streams":[
 {"index":0,"codec_name":"mjpeg","codec_type":"video","width":300,"height":300,"r_frame_rate":"90000/1","avg_frame_rate":"0/0","disposition":{"attached_pic":1},"nb_read_packets":"1"},
 {"index":1,"codec_name":"h264","codec_type":"video","width":1920,"height":1080,"r_frame_rate":"30000/1001","avg_frame_rate":"30000/1001","duration":"60.060000","nb_frames":"1800","nb_read_packets":"1800","disposition":{"attached_pic":0}}],
 "format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","duration":"60.080000"}}`

func TestParseProbe(t *testing.T) {
	info, err := parseProbe([]byte(sampleProbe))
	if err != nil {
		t.Fatal(err)
	}
	if info.FrameCount != 1800 || info.Width != 1920 || info.Height != 1080 || info.Codec != "h264" ||
		math.Abs(info.FrameRate-29.97003) > 1e-4 || info.Duration.Milliseconds() != 60060 {
		t.Fatalf("%+v", info)
	}
	for name, c := range map[string]struct {
		from, to string
		want     error
	}{
		"zero frames":     {`"nb_frames":"1800","nb_read_packets":"1800"`, `"nb_read_packets":"0"`, ErrNoFrames},
		"fewer than told": {`"nb_read_packets":"1800"`, `"nb_read_packets":"900"`, ErrTruncated},
		"odd codec":       {`"codec_name":"h264"`, `"codec_name":"<script>alert(1)</script>"`, ErrUnsupportedCodec},
		"no codec":        {`"codec_name":"h264"`, `"codec_name":""`, ErrUnsupportedCodec},
		"huge":            {`"width":1920`, `"width":100000`, ErrTooLarge},
		"no size":         {`"width":1920`, `"width":0`, ErrNotVideo},
		"still image":     {`"format_name":"mov,mp4,m4a,3gp,3g2,mj2"`, `"format_name":"png_pipe"`, ErrNotVideo},
		"no video":        {`"codec_type":"video","width":1920`, `"codec_type":"audio","width":1920`, ErrNoVideoStream},
		"still jpeg":      {`"format_name":"mov,mp4,m4a,3gp,3g2,mj2"`, `"format_name":"jpeg_pipe"`, ErrStillImage},
		"5000 fps":        {`"r_frame_rate":"30000/1001","avg_frame_rate":"30000/1001"`, `"r_frame_rate":"5000/1","avg_frame_rate":"5000/1"`, ErrFrameRate},
		"0.0001 fps":      {`"r_frame_rate":"30000/1001","avg_frame_rate":"30000/1001"`, `"r_frame_rate":"1/10000","avg_frame_rate":"0/0"`, ErrFrameRate},
		"no rate":         {`"r_frame_rate":"30000/1001","avg_frame_rate":"30000/1001"`, `"r_frame_rate":"0/0","avg_frame_rate":"0/0"`, ErrNotVideo},
		"too many frames": {`"nb_frames":"1800","nb_read_packets":"1800"`, `"nb_read_packets":"10000001"`, ErrTooManyFrames},
	} {
		_, err := parseProbe([]byte(strings.Replace(sampleProbe, c.from, c.to, 1)))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	_, err = parseProbe([]byte(strings.Replace(sampleProbe, `"width":1920`, `"width":8200`, 1)))
	var large *TooLargeError
	if !errors.As(err, &large) || *large != (TooLargeError{Width: 8200, Height: 1080}) || !errors.Is(err, ErrTooLarge) {
		t.Errorf("8200 wide: %v", err)
	}
	_, err = parseProbe([]byte(strings.Replace(sampleProbe, `"avg_frame_rate":"30000/1001"`, `"avg_frame_rate":"5000/1"`, 1)))
	if err != nil {
		t.Errorf("a 5000 fps average with a usable r_frame_rate: %v", err)
	}
	_, err = parseProbe([]byte(strings.Replace(sampleProbe, `"codec_name":"h264"`, `"codec_name":"<b>x</b>"`, 1)))
	var uc *UnsupportedCodecError
	if !errors.As(err, &uc) || uc.Codec != "bxb" {
		t.Errorf("codec name not made safe: %v", err)
	}
	// Rate falls back to r_frame_rate, duration to the format's, then to frames/rate.
	info, err = parseProbe([]byte(strings.NewReplacer(`"avg_frame_rate":"30000/1001"`, `"avg_frame_rate":"0/0"`,
		`"duration":"60.060000",`, ``).Replace(sampleProbe)))
	if err != nil || math.Abs(info.FrameRate-29.97003) > 1e-4 || info.Duration.Milliseconds() != 60080 {
		t.Fatalf("%+v %v", info, err)
	}
	// Rotation (the display matrix wins over the old rotate tag) and sample aspect.
	info, err = parseProbe([]byte(strings.Replace(sampleProbe, `"duration":"60.060000",`,
		`"duration":"60.060000","sample_aspect_ratio":"16:15","tags":{"rotate":"180"},"side_data_list":[{"side_data_type":"Display Matrix","rotation":-90}],`, 1)))
	if err != nil || info.Rotation != 270 || info.SampleAspect != [2]int{16, 15} {
		t.Fatalf("rotation/aspect: %+v %v", info, err)
	}
	for _, sar := range []string{"0:1", "N/A", "1:0", "-4:3", "1000:1"} {
		info, err = parseProbe([]byte(strings.Replace(sampleProbe, `"duration":"60.060000",`, `"duration":"60.060000","sample_aspect_ratio":"`+sar+`",`, 1)))
		if err != nil || info.SampleAspect != [2]int{1, 1} {
			t.Errorf("sar %q: %+v %v", sar, info, err)
		}
	}
	for _, bad := range []string{"", "null", "[]", `{"streams":"x"}`, `{"streams":[{"codec_type":"video","width":-1}]}`} {
		if _, err := parseProbe([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseProbe(f *testing.F) {
	f.Add([]byte(sampleProbe))
	f.Add([]byte(`{"streams":[{"codec_type":"video","codec_name":"vp9","width":2,"height":2,"avg_frame_rate":"1e308/1e-308","nb_read_packets":"1"}]}`))
	f.Add([]byte(`{"streams":[{"codec_type":"video","codec_name":"h264","width":2,"height":2,"r_frame_rate":"NaN","nb_read_packets":"-1"}]}`))
	f.Add([]byte(strings.Replace(sampleProbe, `"duration":"60.060000",`, `"duration":"60.060000","sample_aspect_ratio":"16:15","tags":{"rotate":"90"},"side_data_list":[{"side_data_type":"Display Matrix","rotation":-90}],`, 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := parseProbe(data)
		if err != nil {
			return
		}
		if info.FrameCount <= 0 || info.FrameCount > MaxFrames || info.Width <= 0 || info.Height <= 0 ||
			info.Width > MaxDimension || info.Height > MaxDimension || !(info.FrameRate >= MinFrameRate) ||
			info.FrameRate > MaxFrameRate || info.Duration <= 0 || info.Codec == "" || safeName(info.Codec) != info.Codec ||
			info.Rotation < 0 || info.Rotation >= 360 || info.SampleAspect[0] <= 0 || info.SampleAspect[1] <= 0 {
			t.Fatalf("accepted an impossible video: %+v", info)
		}
	})
}

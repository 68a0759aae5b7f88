package videotest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/movietrace/tracinglocks/functions/envvar"
)

// Foreign is a codec a lab's movie may come in (issue 22: "any codec
// ffmpeg decodes"), as Transcode writes it.
type Foreign struct {
	// Codec is the name ffprobe reports for the stream (codec_name).
	Codec string
	// Encoder is ffmpeg's encoder for it.
	Encoder string
	// Ext is the container it usually comes in (".avi", ".mp4", ".webm").
	Ext string
	// Args are the encoder's options (after -c:v Encoder -pix_fmt yuv420p).
	Args []string
}

// Foreigns are the older and newer codecs issue 22 asks the ingest to
// take: MS-MPEG-4 v3 (DivX 3), MPEG-4 part 2 and Cinepak in AVI, H.264 and
// HEVC in MP4, VP9 in WebM. The lossy ones are at a quality that keeps
// IndexOf exact (-q:v 3, CRF 30).
var Foreigns = []Foreign{
	{Codec: "msmpeg4v3", Encoder: "msmpeg4v3", Ext: ".avi", Args: []string{"-q:v", "3"}},
	{Codec: "mpeg4", Encoder: "mpeg4", Ext: ".avi", Args: []string{"-q:v", "3"}},
	{Codec: "cinepak", Encoder: "cinepak", Ext: ".avi"},
	{Codec: "h264", Encoder: "libx264", Ext: ".mp4"},
	{Codec: "hevc", Encoder: "libx265", Ext: ".mp4", Args: []string{"-x265-params", "log-level=error"}},
	{Codec: "vp9", Encoder: "libvpx-vp9", Ext: ".webm", Args: []string{"-b:v", "0", "-crf", "30", "-deadline", "realtime"}},
}

// Transcode writes src's video to dir/<codec><ext> in codec f and returns
// the file's path.
func Transcode(ctx context.Context, src, dir string, f Foreign) (string, error) {
	dst := filepath.Join(dir, f.Codec+f.Ext)
	args := append([]string{"-nostdin", "-hide_banner", "-v", "error", "-y", "-i", src, "-an",
		"-c:v", f.Encoder, "-pix_fmt", "yuv420p"}, f.Args...)
	cmd := exec.CommandContext(ctx, ffmpegBin(), append(args, dst)...)
	out := &limited{max: 4096}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("videotest: ffmpeg to %s: %w: %s", f.Encoder, err, out.b)
	}
	return dst, nil
}

// ffmpegBin is the ffmpeg the product runs (envvar.FFmpeg), or the one on
// PATH.
func ffmpegBin() string {
	if bin := os.Getenv(envvar.FFmpeg); bin != "" {
		return bin
	}
	return "ffmpeg"
}

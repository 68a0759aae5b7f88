package video

// What package media (the frame provider) shares of this package's ffmpeg
// plumbing.

// InputArgs returns ffmpeg's input arguments for src: the protocol
// whitelist and the input (see input).
func InputArgs(src string) ([]string, error) { return input(src) }

// FFmpegPath is the ffmpeg executable (FFMPEG, else PATH).
func FFmpegPath() (string, error) { return ffmpegPath() }

// FFprobePath is the ffprobe executable (FFPROBE, else PATH).
func FFprobePath() (string, error) { return ffprobePath() }

// Tail keeps the last bytes written to it (ffmpeg's stderr).
type Tail = tailBuffer

// NewTail returns a Tail of at most max bytes.
func NewTail(max int) *Tail { return &tailBuffer{max: max} }

// Classify maps ffmpeg's error output to one of this package's errors, or
// nil.
func Classify(stderr string) error { return classify(stderr) }

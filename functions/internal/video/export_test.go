package video

// Test hooks.

// SetFFmpegArgsHook makes every ffmpeg run of ReadFrames call fn with its
// arguments, until the returned function restores the default.
func SetFFmpegArgsHook(fn func([]string)) (restore func()) {
	old := ffmpegArgs
	ffmpegArgs = fn
	return func() { ffmpegArgs = old }
}

// ParseTiming is parseTiming.
var ParseTiming = parseTiming

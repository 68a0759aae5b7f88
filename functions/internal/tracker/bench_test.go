package tracker_test

import (
	"testing"

	"github.com/movietrace/tracinglocks/functions/internal/tracker"
	"github.com/movietrace/tracinglocks/functions/testkit/groundtruth"
)

// BenchmarkStep is one frame of three markers on a 640x360 clip of each
// ground-truth condition (go test -bench Step -cpuprofile: where the time
// goes).
func BenchmarkStep(b *testing.B) {
	for _, cond := range groundtruth.Conditions {
		b.Run(cond, func(b *testing.B) { benchmarkStep(b, cond) })
	}
}

func benchmarkStep(b *testing.B, cond string) {
	s, err := groundtruth.New(cond, 640, 360, 40)
	if err != nil {
		b.Fatal(err)
	}
	fr := make([][]byte, s.Frames)
	for i := range fr {
		fr[i] = make([]byte, 640*360)
		s.Render(i, fr[i])
	}
	var at [][2]float64
	for _, t := range s.Truth(0) {
		at = append(at, [2]float64{t.X, t.Y})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%(s.Frames-1) == 0 {
			b.StopTimer()
			trk, _, err := tracker.New(tracker.Params{}, fr[0], 640, 360, at)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			for f := 1; f < s.Frames && i < b.N; f++ {
				if _, err := trk.Step(fr[f]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		}
	}
}

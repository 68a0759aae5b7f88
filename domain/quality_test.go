package domain_test

import (
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/movietrace/tracinglocks/domain"
)

func qualityFrames() []domain.Frame {
	pt := func(id string, x float64, lost bool, doubt string) domain.Point {
		return domain.Point{MarkerID: id, X: x, Y: 0.5, Lost: lost, Doubt: doubt}
	}
	var fs []domain.Frame
	for i := range 25 {
		f := domain.Frame{Index: 10 + i, JobID: "j", Points: []domain.Point{
			pt("head", 0.1, i == 3 || i == 4 || i == 5, ""),
			pt("tail", 0.2, false, ""),
			pt("fin", 0.9, false, ""),
		}}
		if i == 7 {
			f.Points[0].Doubt = "appearance"
		}
		if i >= 20 { // tail runs onto head from frame 30 on
			f.Points[0].Doubt, f.Points[1].Doubt, f.Points[1].X = domain.DoubtMerged, domain.DoubtMerged, 0.11
			f.Points[2].Doubt = domain.DoubtMerged // a far merged point is not the partner
		}
		fs = append(fs, f)
	}
	return fs
}

func TestTraceQualityCountsAndTheFirstMerge(t *testing.T) {
	markers := []domain.Marker{{ID: "head", Label: "Head"}, {ID: "tail", Label: "Tail"}, {ID: "fin"}, {ID: "gone", Label: "Gone"}}
	got := domain.TraceQuality(markers, qualityFrames())
	want := []domain.MarkerQuality{
		{MarkerID: "head", Frames: 25, Lost: 3, Uncertain: 6, MergedWith: "tail", MergedAt: 30},
		{MarkerID: "tail", Frames: 25, Uncertain: 5, MergedWith: "head", MergedAt: 30},
		{MarkerID: "fin", Frames: 25, Uncertain: 5, MergedWith: "tail", MergedAt: 30},
		{MarkerID: "gone"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("quality\n got %+v\nwant %+v", got, want)
	}
	sentences := domain.QualitySentences(markers, got)
	wantS := []string{
		"Head: lost in 12% of frames, uncertain in 24%, merged with Tail at frame 30",
		"Tail: lost in 0% of frames, uncertain in 20%, merged with Head at frame 30",
		"fin: lost in 0% of frames, uncertain in 20%, merged with Tail at frame 30",
		"Gone: not traced",
	}
	if !reflect.DeepEqual(sentences, wantS) {
		t.Fatalf("sentences\n got %q\nwant %q", sentences, wantS)
	}
	if err := domain.ValidateQuality(got); err != nil {
		t.Fatal(err)
	}
}

func TestQualitySentenceEdges(t *testing.T) {
	id := func(s string) string { return s }
	for _, c := range []struct {
		q    domain.MarkerQuality
		want string
	}{
		{domain.MarkerQuality{MarkerID: "a", Frames: 240}, "a: found with confidence in all 240 frames"},
		{domain.MarkerQuality{MarkerID: "a", Frames: 1000, Lost: 1, Uncertain: 999}, "a: lost in <1% of frames, uncertain in >99%"},
		{domain.MarkerQuality{MarkerID: "a", Frames: 4, Lost: 4}, "a: lost in 100% of frames, uncertain in 0%"},
	} {
		if got := c.q.Sentence(id); got != c.want {
			t.Errorf("%+v: %q, want %q", c.q, got, c.want)
		}
	}
}

func TestValidateQualityRefusesGarbage(t *testing.T) {
	ok := domain.MarkerQuality{MarkerID: "a", Frames: 3, Lost: 1, Uncertain: 2}
	for name, q := range map[string]domain.MarkerQuality{
		"empty id":         {Frames: 1},
		"bad id":           {MarkerID: "a b"},
		"negative":         {MarkerID: "a", Frames: -1},
		"more than frames": {MarkerID: "a", Frames: 2, Lost: 2, Uncertain: 1},
		"bad partner":      {MarkerID: "a", MergedWith: "?"},
		"merge frame only": {MarkerID: "a", MergedAt: 3},
		"negative frame":   {MarkerID: "a", MergedWith: "b", MergedAt: -1},
	} {
		if domain.ValidateQuality([]domain.MarkerQuality{ok, q}) == nil {
			t.Errorf("%s: accepted %+v", name, q)
		}
	}
	if domain.ValidateQuality(make([]domain.MarkerQuality, domain.MaxMarkers+1)) == nil {
		t.Error("accepted more than MaxMarkers")
	}
}

// Splitting a trace's frames anywhere and adding the parts' quality gives
// the whole trace's (the worker reads the frames page by page).
func TestAddQualityIsTheWholeTraces(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		markers := []domain.Marker{{ID: "a"}, {ID: "b"}, {ID: "c"}}
		n := rapid.IntRange(0, 40).Draw(t, "frames")
		var fs []domain.Frame
		for i := range n {
			f := domain.Frame{Index: i, JobID: "j"}
			for _, m := range markers {
				p := domain.Point{MarkerID: m.ID, X: rapid.Float64Range(0, 1).Draw(t, "x")}
				switch rapid.IntRange(0, 3).Draw(t, "kind") {
				case 1:
					p = domain.Point{MarkerID: m.ID, Lost: true}
				case 2:
					p.Doubt = "jump"
				case 3:
					p.Doubt = domain.DoubtMerged
				}
				f.Points = append(f.Points, p)
			}
			fs = append(fs, f)
		}
		cut := rapid.IntRange(0, n).Draw(t, "cut")
		whole := domain.TraceQuality(markers, fs)
		parts := domain.AddQuality(domain.TraceQuality(markers, fs[:cut]), domain.TraceQuality(markers, fs[cut:]))
		if !reflect.DeepEqual(whole, parts) {
			t.Fatalf("whole %+v, parts %+v", whole, parts)
		}
		if err := domain.ValidateQuality(whole); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCompleteJobRecordsTheQuality(t *testing.T) {
	running := claimed(t, job1, t0)
	q := []domain.MarkerQuality{{MarkerID: "m1", Frames: 10, Lost: 2, Uncertain: 1, MergedWith: "m2", MergedAt: 4}}
	after := exec(t, running, domain.CompleteJob{Job: *running.Lease, Now: at(time.Second), FramesWritten: 10, Quality: q})
	if after.LastJob == nil || !reflect.DeepEqual(after.LastJob.Quality, q) {
		t.Fatalf("LastJob %+v, want quality %+v", after.LastJob, q)
	}
	// No quality (or none to say) records none.
	after = exec(t, running, domain.CompleteJob{Job: *running.Lease, Now: at(time.Second), FramesWritten: 10, Quality: []domain.MarkerQuality{}})
	if after.LastJob.Quality != nil {
		t.Fatalf("quality %+v, want nil", after.LastJob.Quality)
	}
	bad := domain.CompleteJob{Job: *running.Lease, Now: at(time.Second), FramesWritten: 10, Quality: []domain.MarkerQuality{{MarkerID: "m1", Frames: 1, Lost: 2}}}
	if _, err := domain.Execute(&running, bad); domain.ErrorCode(err) != domain.CodeInvalid {
		t.Fatalf("bad quality: %v, want invalid", err)
	}
}

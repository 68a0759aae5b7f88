package httpapi_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
)

// TestTraceQualityIsShownEverywhere: a completed job's quality (what the
// worker derives from the traced points) is in the movie's lastJob, the
// movie list, and the downloads' headers (frames JSON and CSV, results
// CSV).
func TestTraceQualityIsShownEverywhere(t *testing.T) {
	a := newAPI(t, transports[0])
	id := a.createMovie(func(m *domain.Movie) {
		m.Settings.Markers = []domain.Marker{{ID: "m1", Label: "Head", X: 0.5, Y: 0.5}, {ID: "m2", Label: "Tail", X: 0.2, Y: 0.2}}
	})
	al := a.alice()
	al.open(id).want(201)
	al.trace(id, 0).want(202)
	job := a.runJob(id, []domain.Frame{{Index: 0, Points: []domain.Point{{MarkerID: "m1", X: 0.5, Y: 0.5}, {MarkerID: "m2", X: 0.2, Y: 0.2}}}}, false)
	q := []domain.MarkerQuality{
		{MarkerID: "m1", Frames: 300, Lost: 36, Uncertain: 15, MergedWith: "m2", MergedAt: 36},
		{MarkerID: "m2", Frames: 300},
	}
	if _, err := a.fx.movies.Commit(context.Background(), id, domain.CompleteJob{Job: job, Now: a.clock.Now(), FramesWritten: 1, Quality: q}); err != nil {
		t.Fatal(err)
	}
	sentences := []string{"Head: lost in 12% of frames, uncertain in 5%, merged with Tail at frame 36", "Tail: found with confidence in all 300 frames"}

	d := al.get(id).want(200).detail()
	at := 36
	want := []httpapi.QualityView{
		{MarkerID: "m1", Label: "Head", Frames: 300, Lost: 36, Uncertain: 15, MergedWith: "m2", MergedAt: &at, Summary: sentences[0]},
		{MarkerID: "m2", Label: "Tail", Frames: 300, Summary: sentences[1]},
	}
	if d.LastJob == nil || !reflect.DeepEqual(d.LastJob.Quality, want) {
		t.Fatalf("lastJob %+v, want quality %+v", d.LastJob, want)
	}
	var list httpapi.MovieList
	al.do("GET", "/movies", nil).want(200).decode(&list)
	found := false
	for _, s := range list.Movies {
		if s.ID == id {
			found = reflect.DeepEqual(s.Quality, sentences)
		}
	}
	if !found {
		t.Fatalf("list %+v: want quality %q on %s", list, sentences, id)
	}
	var page httpapi.FramePage
	al.do("GET", "/movies/"+id+"/frames", nil).want(200).decode(&page)
	if page.Trace == nil || !reflect.DeepEqual(page.Trace.Quality, sentences) {
		t.Fatalf("frames trace %+v", page.Trace)
	}
	for _, path := range []string{"/movies/" + id + "/frames?format=csv", "/movies/" + id + "/results?format=csv"} {
		body := string(al.do("GET", path, nil).want(200).body)
		if !strings.Contains(body, "# quality: "+sentences[0]+"\n# quality: "+sentences[1]+"\n") {
			t.Fatalf("%s header:\n%s", path, body[:min(len(body), 800)])
		}
	}
}

package purge_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/purge"
)

// fakes: pure unit test of the finisher's order and idempotence (the
// sweeper's operations test runs it on the emulators).
type fakeFiles struct {
	objects map[string]int
	fail    int
}

func (f *fakeFiles) DeleteMovieObjects(_ context.Context, id string) (int, error) {
	if f.fail > 0 {
		f.fail--
		return 0, errors.New("injected: S3 unavailable")
	}
	n := f.objects[id]
	delete(f.objects, id)
	return n, nil
}

type fakeFrames map[string]int

func (f fakeFrames) DeleteAll(_ context.Context, id string) (int, error) {
	n := f[id]
	delete(f, id)
	return n, nil
}

type fakeRows map[string]domain.Movie

func (r fakeRows) Delete(_ context.Context, id string, g domain.Guard) (domain.Movie, error) {
	m, ok := r[id]
	if !ok {
		return domain.Movie{}, &domain.Error{Code: domain.CodeNotFound, Message: "movie not found"}
	}
	if err := domain.Decide(g, &m); err != nil {
		return domain.Movie{}, err
	}
	delete(r, id)
	return m, nil
}

func TestFinisherRemovesEverythingOnceAndTheRowAfterTheGrace(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	m, err := domain.NewMovie("mv-1", "M", 10, 25, t0)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = domain.Execute(&m, domain.DeleteMovie{Now: t0}); err != nil || m.Status != domain.StatusDeleting {
		t.Fatalf("delete: %v, %s", err, m.Status)
	}
	ready, _ := domain.NewMovie("mv-2", "Kept", 10, 25, t0)
	files := &fakeFiles{objects: map[string]int{"mv-1": 5, "mv-2": 3}, fail: 1}
	frames := fakeFrames{"mv-1": 7, "mv-2": 2}
	rows := fakeRows{"mv-1": m, "mv-2": ready}
	f := purge.Finisher{Files: files, Frames: frames, Rows: rows, Grace: time.Minute}
	listing := []domain.Movie{m, ready}

	// A failed step: nothing else happens, the error is reported.
	if n, err := f.Hook(context.Background(), listing, t0.Add(2*time.Minute)); err == nil || n != 0 || len(rows) != 2 {
		t.Fatalf("failed sweep: %d, %v, %d rows", n, err, len(rows))
	}
	// Within the grace: files and frames go, the row stays.
	if n, err := f.Hook(context.Background(), listing, t0.Add(30*time.Second)); err != nil || n != 0 {
		t.Fatalf("sweep in the grace: %d, %v", n, err)
	}
	if _, ok := files.objects["mv-1"]; ok || frames["mv-1"] != 0 || len(rows) != 2 {
		t.Fatalf("after a sweep in the grace: %v %v %d rows", files.objects, frames, len(rows))
	}
	// After it: the row goes; a repeated sweep (the listing still shows
	// the row) is no error.
	for range 2 {
		if _, err := f.Hook(context.Background(), listing, t0.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := rows["mv-1"]; ok {
		t.Fatal("the deleting row is still there")
	}
	if files.objects["mv-2"] != 3 || frames["mv-2"] != 2 || len(rows) != 1 {
		t.Fatalf("another movie was touched: %v %v %v", files.objects, frames, rows)
	}
}

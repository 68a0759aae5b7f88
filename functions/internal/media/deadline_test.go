package media_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/media"
)

// A range whose deadline has passed before its first chunk is finished
// still stores that chunk and ends (every range makes progress on a loaded
// machine); only its hard deadline gives up with ErrNoProgress, storing
// nothing.
func TestDeadlineStillMakesProgress(t *testing.T) {
	src := source(t, 100)
	objs := newObjects()
	past := time.Now().Add(-time.Second)
	res, err := media.Prepare(context.Background(), src, media.PrepareOptions{ChunkFrames: 10, ExpectedFrames: 100, FrameRate: 25,
		Deadline: past}, objs.store("late"))
	// (A small clip may be encoded whole before the first look at the
	// finished chunks: then they are all stored.)
	if err != nil || res.NextFrame < 10 || res.NextFrame%10 != 0 || res.NextFrame > 100 {
		t.Fatalf("a range past its deadline: %+v %v", res, err)
	}
	if objs.puts != res.NextFrame/10 {
		t.Fatalf("%d chunks stored, the range says %d frames", objs.puts, res.NextFrame)
	}
	objs = newObjects()
	res, err = media.Prepare(context.Background(), src, media.PrepareOptions{ChunkFrames: 10, ExpectedFrames: 100, FrameRate: 25,
		Deadline: past, HardDeadline: past}, objs.store("hard"))
	if !errors.Is(err, media.ErrNoProgress) || res.NextFrame != 0 || objs.puts != 0 {
		t.Fatalf("past its hard deadline: %+v %v, %d chunks stored", res, err, objs.puts)
	}
}

package media

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The encoder is paused while more than encodeAhead chunk files wait,
// resumed when fewer do, and resumed when the range ends paused. The
// watcher's signals are received in order; no time is asserted.
func TestHoldBackPausesTheEncoder(t *testing.T) {
	dir := t.TempDir()
	sent := make(chan os.Signal, 8)
	send := func(s os.Signal) error { sent <- s; return nil }
	files := func(from, to int) {
		for k := from; k < to; k++ {
			if err := os.WriteFile(filepath.Join(dir, segmentName(k)), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Other files (the segment list) do not count.
	if err := os.WriteFile(filepath.Join(dir, "list.csv"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	files(0, encodeAhead)
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		holdBack(done, send, dir)
	}()
	files(encodeAhead, encodeAhead+1)
	if s := <-sent; s != syscall.SIGSTOP {
		t.Fatalf("%d chunks waiting: %v, want SIGSTOP", encodeAhead+1, s)
	}
	if err := os.Remove(filepath.Join(dir, segmentName(0))); err != nil {
		t.Fatal(err)
	}
	if s := <-sent; s != syscall.SIGCONT {
		t.Fatalf("%d chunks waiting: %v, want SIGCONT", encodeAhead, s)
	}
	files(100, 102)
	if s := <-sent; s != syscall.SIGSTOP {
		t.Fatalf("%d chunks waiting: %v, want SIGSTOP", encodeAhead+2, s)
	}
	close(done)
	<-ended
	if s := <-sent; s != syscall.SIGCONT {
		t.Fatalf("ended paused: %v, want SIGCONT", s)
	}
	select {
	case s := <-sent:
		t.Fatalf("an extra %v", s)
	default:
	}
	if n := chunkFiles(dir); n != encodeAhead+2 {
		t.Fatalf("%d chunk files counted", n)
	}
}

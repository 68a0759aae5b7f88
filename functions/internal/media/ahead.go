package media

import (
	"os"
	"strings"
	"syscall"
	"time"
)

// holdBack pauses the encoder (SIGSTOP) while more than encodeAhead chunks
// are in dir and resumes it (SIGCONT) when fewer are, until done is
// closed (then it resumes it if paused); send signals the encoder
// (its os.Process.Signal).
func holdBack(done <-chan struct{}, send func(os.Signal) error, dir string) {
	t := time.NewTicker(aheadTick)
	defer t.Stop()
	paused := false
	signal := func(p bool) {
		var sig os.Signal = syscall.SIGCONT
		if p {
			sig = syscall.SIGSTOP
		}
		if send(sig) == nil {
			paused = p
		}
	}
	defer func() {
		if paused {
			signal(false)
		}
	}()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if p := chunkFiles(dir) > encodeAhead; p != paused {
			signal(p)
		}
	}
}

// chunkFiles counts the chunk files in dir (finished or being written).
func chunkFiles(dir string) int {
	entries, _ := os.ReadDir(dir)
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "c") && strings.HasSuffix(e.Name(), ".mp4") {
			n++
		}
	}
	return n
}

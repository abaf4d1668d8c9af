package dispatch

import (
	"sync"
	"testing"
	"time"

	"github.com/petermattis/goid"
)

// A task handed to workers runs on a goroutine an earlier task left idle,
// and every goroutine ends once stop closes.
func TestWorkersReuseGoroutinesAndEndAtStop(t *testing.T) {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	w := newWorkers(&wg, stop)
	ran := make(chan int64)
	w.Go(func() { ran <- goid.Get() })
	first := <-ran
	reused := false
	for range 200 {
		w.Go(func() { ran <- goid.Get() })
		if <-ran == first {
			reused = true
			break
		}
		time.Sleep(time.Millisecond)
	}
	if !reused {
		t.Error("200 tasks later, none ran on the first task's goroutine, idle since")
	}
	close(stop)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("workers still running 10s after stop")
	}
	w.Go(func() { ran <- 0 }) // after stop, a task still runs, on a goroutine of its own
	<-ran
	wg.Wait()
}

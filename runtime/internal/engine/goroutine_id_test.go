package engine

import (
	"sync"
	"testing"
)

// The fast goroutine ID must name the same goroutine the stack header does,
// in the goroutine asking and in others, or the check that engine calls come
// from the stepped coroutine would fail good code (or pass foreign code).
func TestGoroutineIDMatchesTheStackHeader(t *testing.T) {
	if !fastGoroutineIDOK() {
		t.Fatal("goid disagrees with runtime.Stack on this Go release: the engine fell back to the slow parse")
	}
	var wg sync.WaitGroup
	ids := make([]uint64, 50)
	for i := range ids {
		wg.Go(func() {
			if got, want := goroutineID(), stackGoroutineID(); got != want {
				t.Errorf("goroutine %d: goroutineID %d, stack header %d", i, got, want)
			}
			ids[i] = goroutineID()
		})
	}
	wg.Wait()
	seen := map[uint64]bool{goroutineID(): true}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("goroutine ID %d given to two goroutines (Go never reuses one)", id)
		}
		seen[id] = true
	}
}

package dispatch

import "sync"

// workers runs turns, activities or activities' functions on goroutines it
// keeps once they finish, until stop closes. Each calls deep (the store's
// driver, the JSON codec, the interceptors): a fresh goroutine grows its
// stack, copying it, for each one, and a kept one has grown it already. At
// most as many are kept as ran at once, which the slots bound.
type workers struct {
	wg   *sync.WaitGroup
	idle chan func()
	stop <-chan struct{}
}

func newWorkers(wg *sync.WaitGroup, stop <-chan struct{}) *workers {
	return &workers{wg: wg, idle: make(chan func()), stop: stop}
}

// Go runs f on an idle goroutine, or on a new one when none is idle. The
// goroutine counts in wg until it ends.
func (w *workers) Go(f func()) {
	select {
	case w.idle <- f:
	default:
		w.wg.Go(func() { w.run(f) })
	}
}

// run runs f, then what Go hands over, until stop closes.
func (w *workers) run(f func()) {
	for {
		f()
		select {
		case f = <-w.idle:
		case <-w.stop:
			return
		}
	}
}

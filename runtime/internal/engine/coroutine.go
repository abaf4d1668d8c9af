package engine

import (
	"container/heap"
	"fmt"
	rt "runtime"
	"sync"
	"sync/atomic"
	"time"
)

// scheduler runs an instance's orchestration goroutines as coroutines: exactly
// one of them runs at a time, and control passes back to the engine only when
// the running one blocks on futures or returns. A coroutine becomes runnable
// when the futures it waits for resolve; runnable coroutines are resumed
// lowest creation index first, which makes every run of the same history
// identical. Waking is driven by the futures, so the cost of an event does not
// grow with the number of coroutines or futures (replay stays linear).
type scheduler struct {
	cos   []*coroutine
	ready coroutineHeap
	// current is the coroutine being stepped. Atomic because a goroutine the
	// engine did not start (a go statement) may read it while it checks itself.
	current atomic.Pointer[coroutine]
	yield   chan struct{}
	// aborting is set while the turn unwinds its blocked coroutines.
	aborting bool
	// dead is closed when the scheduler gives up on its coroutines (a step ran
	// past its deadline, foreign code awaited, or the turn ended): coroutines
	// still parked, or that come back later, exit without touching the turn.
	dead     chan struct{}
	deadOnce sync.Once
	// stepTimeout bounds how long one coroutine may run without yielding.
	stepTimeout time.Duration
	timer       *time.Timer
	// verifyCaller turns on the check that engine calls come from the
	// coroutine being stepped (live turns only: replay re-runs the same code).
	verifyCaller atomic.Bool
	faultMu      sync.Mutex
	fault        error
	faulted      chan struct{}
}

type coroutine struct {
	s      *scheduler
	index  int
	label  string
	fn     func()
	resume chan struct{}
	// goid identifies the coroutine's goroutine, to tell it from goroutines
	// that user code started with a go statement.
	goid     atomic.Uint64
	started  bool
	done     bool
	queued   bool
	returned bool
	// waiting, while set, is what the coroutine is parked on.
	waiting *wait
	// panicked holds a panic from user code, with its stack.
	panicked any
	stack    []byte
}

// wait is one park of a coroutine: it becomes runnable once need more of the
// futures it registered with have resolved.
type wait struct {
	c    *coroutine
	need int
}

func newScheduler(stepTimeout time.Duration) *scheduler {
	return &scheduler{yield: make(chan struct{}), dead: make(chan struct{}), faulted: make(chan struct{}), stepTimeout: stepTimeout}
}

// spawn adds a coroutine; it starts at the next runUntilBlocked. During
// teardown nothing new starts.
func (s *scheduler) spawn(label string, fn func()) *coroutine {
	c := &coroutine{s: s, index: len(s.cos), label: label, fn: fn, resume: make(chan struct{})}
	s.cos = append(s.cos, c)
	if !s.aborting {
		s.wake(c)
	}
	return c
}

func (s *scheduler) wake(c *coroutine) {
	if c.queued || c.done {
		return
	}
	c.queued = true
	heap.Push(&s.ready, c)
}

// runUntilBlocked resumes runnable coroutines until every one is parked or
// done. It returns a *panicError when orchestration code panicked, a
// *ForeignGoroutineError when code outside the coroutines awaited, and a
// *BlockedError when a coroutine ran past its step deadline.
func (s *scheduler) runUntilBlocked() error {
	for s.ready.Len() > 0 {
		c := heap.Pop(&s.ready).(*coroutine)
		c.queued = false
		if c.done {
			continue
		}
		c.waiting = nil
		if err := s.step(c); err != nil {
			return err
		}
		if c.panicked != nil {
			return &panicError{value: c.panicked, stack: c.stack}
		}
	}
	return nil
}

// step hands control to c and waits until it parks or returns, or until its
// step deadline passes.
func (s *scheduler) step(c *coroutine) error {
	s.current.Store(c)
	defer s.current.Store(nil)
	if !c.started {
		c.started = true
		go c.run()
	}
	c.resume <- struct{}{}
	var deadline <-chan time.Time
	if s.stepTimeout > 0 {
		if s.timer == nil {
			s.timer = time.NewTimer(s.stepTimeout)
		} else {
			s.timer.Reset(s.stepTimeout)
		}
		defer s.timer.Stop()
		deadline = s.timer.C
	}
	select {
	case <-s.yield:
		return nil
	case <-deadline:
		err := &BlockedError{Coroutine: c.label, Timeout: s.stepTimeout, Stack: goroutineStack(c.goid.Load())}
		s.kill()
		return err
	case <-s.faulted:
		s.kill()
		s.faultMu.Lock()
		defer s.faultMu.Unlock()
		return s.fault
	}
}

func (c *coroutine) run() {
	c.goid.Store(goroutineID())
	defer c.exit()
	select {
	case <-c.resume:
	case <-c.s.dead:
		rt.Goexit()
	}
	c.fn()
	c.returned = true
}

// exit runs when the coroutine's function returns, panics, or unwinds with
// runtime.Goexit (teardown). Goexit cannot be stopped by a recover in user
// code, so a turn's coroutines always unwind.
func (c *coroutine) exit() {
	if !c.returned {
		if r := recover(); r != nil {
			c.panicked = r
			buf := make([]byte, 16<<10)
			c.stack = buf[:rt.Stack(buf, false)]
		}
	}
	c.done = true
	select {
	case c.s.yield <- struct{}{}:
	case <-c.s.dead:
	}
}

// park suspends the calling coroutine until need of futures have resolved.
// Called only from orchestration code, that is, from inside a coroutine.
func (s *scheduler) park(futures []*Future, need int) {
	c := s.caller()
	if s.aborting {
		rt.Goexit() // a deferred call awaiting while its coroutine unwinds
	}
	w := &wait{c: c, need: need}
	for _, f := range futures {
		if !f.done {
			f.waiters = append(f.waiters, w)
		}
	}
	c.waiting = w
	select {
	case s.yield <- struct{}{}:
	case <-s.dead:
		rt.Goexit()
	}
	select {
	case <-c.resume:
	case <-s.dead:
	}
	if s.aborting || s.isDead() {
		rt.Goexit()
	}
}

// caller returns the coroutine making an engine call. A goroutine that is
// not the stepped coroutine (user code used a go statement) must not touch
// the turn: the turn fails with a clear error and that goroutine exits.
// Exiting only it, rather than panicking, keeps the process alive.
func (s *scheduler) caller() *coroutine {
	if s.isDead() {
		rt.Goexit()
	}
	c := s.current.Load()
	if c == nil || (s.verifyCaller.Load() && c.goid.Load() != goroutineID()) {
		s.faultMu.Lock()
		if s.fault == nil {
			s.fault = &ForeignGoroutineError{Stack: goroutineStack(goroutineID())}
			close(s.faulted)
		}
		s.faultMu.Unlock()
		rt.Goexit()
	}
	return c
}

func (s *scheduler) isDead() bool {
	select {
	case <-s.dead:
		return true
	default:
		return false
	}
}

func (s *scheduler) kill() { s.deadOnce.Do(func() { close(s.dead) }) }

// teardown unwinds every started coroutine that is still parked, one at a
// time, so no goroutine outlives its turn. A coroutine stuck outside the
// engine cannot be unwound; it exits when it next calls the engine.
func (s *scheduler) teardown() {
	if !s.isDead() {
		s.aborting = true
		for _, c := range s.cos {
			if c.started && !c.done {
				if err := s.step(c); err != nil {
					break
				}
			}
		}
	}
	s.kill()
}

// panicError is a panic raised by orchestration code.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string {
	return fmt.Sprintf("orchestration panicked: %v\n%s", e.value, e.stack)
}

type coroutineHeap []*coroutine

func (h coroutineHeap) Len() int           { return len(h) }
func (h coroutineHeap) Less(i, j int) bool { return h[i].index < h[j].index }
func (h coroutineHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *coroutineHeap) Push(x any)        { *h = append(*h, x.(*coroutine)) }
func (h *coroutineHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

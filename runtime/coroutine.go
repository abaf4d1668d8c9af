package runtime

import (
	"fmt"
	rt "runtime"
)

// scheduler runs an instance's orchestration goroutines as coroutines: exactly
// one of them runs at a time, and control passes back to the engine only when
// the running one blocks or returns. Runnable coroutines are resumed in
// creation order, which makes every run of the same history identical.
type scheduler struct {
	cos      []*coroutine
	current  *coroutine
	yield    chan struct{}
	aborting bool
}

type coroutine struct {
	s       *scheduler
	fn      func()
	resume  chan struct{}
	started bool
	done    bool
	// wait, while set, is the condition the coroutine blocked on.
	wait func() bool
	// panicked holds a panic from user code, with its stack.
	panicked any
	stack    []byte
}

// abortSignal unwinds a blocked coroutine when its turn ends.
type abortSignal struct{}

func newScheduler() *scheduler { return &scheduler{yield: make(chan struct{})} }

// spawn adds a coroutine; it starts at the next runUntilBlocked.
func (s *scheduler) spawn(fn func()) *coroutine {
	c := &coroutine{s: s, fn: fn, resume: make(chan struct{})}
	s.cos = append(s.cos, c)
	return c
}

func (c *coroutine) runnable() bool {
	return !c.done && (!c.started || c.wait == nil || c.wait())
}

// runUntilBlocked resumes runnable coroutines until every one is blocked or
// done. It returns the first panic raised by orchestration code.
func (s *scheduler) runUntilBlocked() error {
	for {
		progressed := false
		for i := 0; i < len(s.cos); i++ { // spawned coroutines join the loop
			c := s.cos[i]
			if !c.runnable() {
				continue
			}
			c.wait = nil
			s.step(c)
			progressed = true
			if c.panicked != nil {
				return fmt.Errorf("orchestration panicked: %v\n%s", c.panicked, c.stack)
			}
		}
		if !progressed {
			return nil
		}
	}
}

// step hands control to c and waits until it blocks or returns.
func (s *scheduler) step(c *coroutine) {
	s.current = c
	if !c.started {
		c.started = true
		go c.run()
	}
	c.resume <- struct{}{}
	<-s.yield
	s.current = nil
}

func (c *coroutine) run() {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(abortSignal); !ok {
				c.panicked = r
				buf := make([]byte, 16<<10)
				c.stack = buf[:rt.Stack(buf, false)]
			}
		}
		c.done = true
		c.s.yield <- struct{}{}
	}()
	<-c.resume
	c.fn()
}

// block suspends the running coroutine until cond holds. Called only from
// orchestration code, that is, from inside a coroutine.
func (s *scheduler) block(cond func() bool) {
	if cond() {
		return
	}
	c := s.current
	if c == nil {
		panic("duroxide: orchestration API used outside orchestration code (did you use a go statement instead of ctx.Go?)")
	}
	c.wait = cond
	s.yield <- struct{}{}
	<-c.resume
	if s.aborting {
		panic(abortSignal{})
	}
}

// abort unwinds every started coroutine that is still blocked, so no goroutine
// outlives its turn.
func (s *scheduler) abort() {
	s.aborting = true
	for _, c := range s.cos {
		if c.started && !c.done {
			s.step(c)
		}
	}
}

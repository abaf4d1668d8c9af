// Package wake lets providers wake waiting fetchers and watchers when work
// arrives, and long-poll with a fallback interval for work they were not told of.
package wake

import (
	"context"
	"sync"
	"time"
)

// Signal wakes every goroutine waiting on it when Notify is called. A waiter
// takes the current channel with C before looking for work, so a Notify that
// races with the look is never missed.
type Signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// NewSignal returns a Signal nobody has notified yet.
func NewSignal() *Signal { return &Signal{ch: make(chan struct{})} }

// C returns a channel that is closed by the next Notify.
func (s *Signal) C() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch
}

// Notify wakes all current waiters.
func (s *Signal) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.ch)
	s.ch = make(chan struct{})
}

// Poll calls try until it finds something or timeout passes. Between tries it
// sleeps until sig is notified, interval passes, the next delayed work try
// reported (nextDue, zero when none) becomes due, closed is closed or ctx
// ends. No notification announces delayed work (a timer) becoming due, so
// nextDue is what keeps timers on time. try is called at least once.
func Poll(ctx context.Context, timeout, interval time.Duration, sig *Signal, closed <-chan struct{}, try func() (found bool, nextDue time.Time, err error)) error {
	deadline := time.Now().Add(timeout)
	for {
		woken := sig.C()
		found, nextDue, err := try()
		if err != nil || found {
			return err
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return nil
		}
		wait := min(remaining, interval)
		if !nextDue.IsZero() {
			wait = max(min(wait, time.Until(nextDue)), time.Millisecond)
		}
		if !Sleep(ctx, woken, wait, closed) {
			return nil
		}
	}
}

// Sleep waits until woken is closed, d passes, closed is closed or ctx ends.
// It reports whether the caller should go on (false: ctx ended or closed).
func Sleep(ctx context.Context, woken <-chan struct{}, d time.Duration, closed <-chan struct{}) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-woken:
		return true
	case <-timer.C:
		return true
	case <-closed:
		return false
	case <-ctx.Done():
		return false
	}
}

// Send delivers v on out unless ctx ends or closed is closed first; it reports
// whether it delivered.
func Send[T any](ctx context.Context, out chan<- T, v T, closed <-chan struct{}) bool {
	select {
	case out <- v:
		return true
	case <-closed:
		return false
	case <-ctx.Done():
		return false
	}
}

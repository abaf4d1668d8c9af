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

// Due is the earliest due time of delayed work (timers) a provider queued
// itself. Its waiting fetchers sleep until then without being woken, and
// fetching, for every timer queued; they only re-plan their sleep when an
// earlier one is noted. A nil *Due notes nothing.
type Due struct {
	mu  sync.Mutex
	at  time.Time
	sig *Signal
}

// NewDue returns a Due that knows of no timer.
func NewDue() *Due { return &Due{sig: NewSignal()} }

// Note records that work becomes due at t, waking sleepers to re-plan when t
// is earlier than the earliest due time noted before (or that one passed).
func (d *Due) Note(t time.Time) {
	if d == nil || t.IsZero() {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.at.After(time.Now()) && !t.Before(d.at) {
		return
	}
	d.at = t
	d.sig.Notify()
}

// next returns the earliest due time noted (zero: none) and a channel closed
// when an earlier one is noted.
func (d *Due) next() (time.Time, <-chan struct{}) {
	if d == nil {
		return time.Time{}, nil
	}
	replan := d.sig.C()
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.at, replan
}

// Poll calls try until it finds something or timeout passes. Between tries it
// sleeps until sig is notified, interval passes, the next delayed work try
// reported (nextDue, zero when none) or due noted becomes due, closed is
// closed or ctx ends. No notification announces delayed work (a timer)
// becoming due, so the due times are what keep timers on time. try is
// called at least once; due may be nil.
func Poll(ctx context.Context, timeout, interval time.Duration, sig *Signal, due *Due, closed <-chan struct{}, try func() (found bool, nextDue time.Time, err error)) error {
	deadline := time.Now().Add(timeout)
	for {
		woken := sig.C()
		found, nextDue, err := try()
		if err != nil || found {
			return err
		}
		if !sleepUntilWork(ctx, deadline, interval, nextDue, woken, due, closed) {
			return nil
		}
	}
}

// sleepUntilWork sleeps between two tries of Poll, re-planning without a try
// when an earlier due time is noted. It reports whether to try again (false:
// the deadline passed, ctx ended or closed).
func sleepUntilWork(ctx context.Context, deadline time.Time, interval time.Duration, nextDue time.Time, woken <-chan struct{}, due *Due, closed <-chan struct{}) bool {
	for {
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return false
		}
		wait := min(remaining, interval)
		if !nextDue.IsZero() {
			wait = max(min(wait, time.Until(nextDue)), time.Millisecond)
		}
		// A noted time already past was due before the last try, which saw
		// it (or its turn is taken): it is no reason to try again.
		noted, replan := due.next()
		if until := time.Until(noted); !noted.IsZero() && until > 0 {
			wait = min(wait, until)
		}
		timer := time.NewTimer(wait)
		select {
		case <-woken:
		case <-timer.C:
		case <-replan:
			timer.Stop()
			continue
		case <-closed:
			timer.Stop()
			return false
		case <-ctx.Done():
			timer.Stop()
			return false
		}
		timer.Stop()
		return true
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

// Package wake lets providers wake waiting fetchers and watchers when work
// arrives, and long-poll with a fallback interval for work they were not told of.
package wake

import (
	"cmp"
	"container/heap"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// Signal wakes every goroutine waiting on it when Notify is called. A waiter
// takes the current channel with C before looking for work, so a Notify that
// races with the look is never missed.
type Signal struct {
	mu  sync.Mutex
	ch  chan struct{}
	gen atomic.Uint64 // notifications so far
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
	s.gen.Add(1)
	close(s.ch)
	s.ch = make(chan struct{})
}

// ScanGate tells a fetcher that takes due timers by name (Due.Ready) when it
// must still look for other ready work: when work was announced on its
// signal since its last look, or a poll interval passed (work nobody
// announced: another process's, or made visible by time). Between those,
// due timers are all there is to fetch, and a look would only contend with
// the fetches taking them.
type ScanGate struct {
	sig      *Signal
	interval time.Duration
	seen     atomic.Uint64 // the signal's notifications at the last look
	at       atomic.Int64  // the last look (Unix ns)
}

// NewScanGate returns a gate on sig that owes a look at once.
func NewScanGate(sig *Signal, interval time.Duration) *ScanGate {
	g := &ScanGate{sig: sig, interval: interval}
	g.seen.Store(^uint64(0))
	return g
}

// Owed reports whether the fetcher must look for ready work now; if so it
// records the look as begun (work announced from here on owes another).
func (g *ScanGate) Owed() bool {
	gen, now := g.sig.gen.Load(), time.Now().UnixNano()
	if g.seen.Load() == gen && now-g.at.Load() < int64(g.interval) {
		return false
	}
	g.seen.Store(gen)
	g.at.Store(now)
	return true
}

// Due is what a provider knows of the timers its own acks queued: the
// earliest due time, and which instances' timers fall due when. Its waiting
// fetchers sleep until then without being woken, and fetching, for every
// timer queued; they only re-plan their sleep when an earlier one is noted.
// When timers fall due a fetcher can ask for those instances by name (Ready)
// rather than look for ready work. A nil *Due notes nothing.
type Due struct {
	mu     sync.Mutex
	at     time.Time
	sig    *Signal
	timers timerHeap
	// noted counts each instance's timers in the heap; taken holds those a
	// fetch delivered before they were handed out (Taken), skipped then.
	noted map[string]int
	taken map[string]map[string]bool // instance, stored item
	lead  time.Duration              // Upcoming's; zero means ScanLead
	seq   uint64                     // timers noted so far
}

// maxNotedTimers bounds the timers a Due remembers. When full, a timer due
// before the farthest noted one takes its place, and the farthest is found
// by the fetchers' general look for ready work, as one due after all of
// them is: far-future timers never crowd out near ones.
const maxNotedTimers = 4096

// NewDue returns a Due that knows of no timer.
func NewDue() *Due { return &Due{sig: NewSignal()} }

// Note records that instance has a timer due at t (instance may be empty:
// only the time is known), waking sleepers to re-plan when t is earlier
// than the earliest due time noted before (or that one passed).
func (d *Due) Note(instance string, t time.Time) { d.NoteTimer(instance, t, "") }

// NoteTimer is Note that also keeps the timer's message in its stored form,
// for ReadyTimers.
func (d *Due) NoteTimer(instance string, t time.Time, item string) {
	d.note(DueTimer{at: t, Instance: instance, Item: item})
}

// Acked notes what a committed ack of instance did to its timers, and
// reports whether it queued one due after nowMs. Each of those is noted
// (the ack woke no fetcher for them); those it cancelled, whose messages
// its store deleted after queuing its own, are forgotten, so no turn is
// built for a timer that is gone.
func (d *Due) Acked(instance string, enc encode.Ack, nowMs int64) (later bool) {
	for _, timer := range enc.OrchItems {
		if timer.Item.Kind != provider.WorkTimerFired || timer.Item.FireAt <= nowMs {
			continue
		}
		later = true
		d.note(DueTimer{at: time.UnixMilli(timer.Item.FireAt), Instance: instance, Item: timer.Data,
			execution: timer.Item.ExecutionID, id: timer.Item.ID})
	}
	if d != nil {
		d.forget(instance, enc.CancelledTimers)
	}
	return later
}

// note records t: in the heap when its instance is known and it is due
// before the farthest noted timer or there is room (makeRoom), in the
// earliest due time always.
func (d *Due) note(t DueTimer) {
	if d == nil || t.at.IsZero() {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if t.Instance != "" && d.makeRoom(t.at) {
		d.seq++
		t.seq = d.seq
		heap.Push(&d.timers, t)
		if d.noted == nil {
			d.noted, d.taken = map[string]int{}, map[string]map[string]bool{}
		}
		d.noted[t.Instance]++
	}
	if d.at.After(time.Now()) && !t.at.Before(d.at) {
		return
	}
	d.at = t.at
	d.sig.Notify()
}

// makeRoom reports whether a timer due at at can be noted: there is room,
// or the farthest noted timer is due after at and is forgotten for it. The
// farthest is a leaf of the heap: finding it walks half of the heap, only
// when it is full.
func (d *Due) makeRoom(at time.Time) bool {
	if len(d.timers) < maxNotedTimers {
		return true
	}
	far := len(d.timers) / 2
	for i := far + 1; i < len(d.timers); i++ {
		if d.timers[i].compare(d.timers[far]) > 0 {
			far = i
		}
	}
	if !d.timers[far].at.After(at) {
		return false
	}
	d.drop(heap.Remove(&d.timers, far).(DueTimer))
	return true
}

// forget drops the noted timers of instance that cancelled names.
func (d *Due) forget(instance string, cancelled []provider.TimerRef) {
	if len(cancelled) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.noted[instance] == 0 {
		return
	}
	d.removeWhere(func(t DueTimer) bool {
		return t.Instance == instance && slices.Contains(cancelled, provider.TimerRef{ExecutionID: t.execution, TimerID: t.id})
	})
}

// Ready removes and returns up to max instances whose noted timers are due at now.
func (d *Due) Ready(now time.Time, max int) []string {
	var out []string
	for _, t := range d.ReadyTimers(now, max) {
		out = append(out, t.Instance)
	}
	return out
}

// ReadyTimers removes and returns the noted timers due at now of up to max
// instances: every due timer of each, together, earliest first. One turn
// delivers them all: a turn built for one would find another visible and be
// stale.
func (d *Due) ReadyTimers(now time.Time, max int) []DueTimer {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []DueTimer
	for instances := 0; instances < max && len(d.timers) > 0 && !d.timers[0].at.After(now); {
		t := heap.Pop(&d.timers).(DueTimer)
		if d.drop(t) {
			continue
		}
		out = append(out, t)
		out = d.takeDue(out, t.Instance, now)
		instances++
	}
	return out
}

// drop forgets t, removed from the heap, and reports whether a fetch took it
// (Taken).
func (d *Due) drop(t DueTimer) (taken bool) {
	taken = d.taken[t.Instance][t.Item]
	delete(d.taken[t.Instance], t.Item)
	if d.noted[t.Instance]--; d.noted[t.Instance] <= 0 {
		delete(d.noted, t.Instance)
		delete(d.taken, t.Instance)
	}
	return taken
}

// takeDue removes instance's other timers due at now from the heap and
// appends those not taken to out, earliest first. The heap is walked only
// when the instance has other timers noted.
func (d *Due) takeDue(out []DueTimer, instance string, now time.Time) []DueTimer {
	if d.noted[instance] == 0 {
		return out
	}
	more := d.removeWhere(func(t DueTimer) bool { return t.Instance == instance && !t.at.After(now) })
	slices.SortFunc(more, DueTimer.compare)
	return append(out, more...)
}

// removeWhere removes from the heap, and forgets, the timers match selects;
// it returns those no fetch took. It walks the whole heap.
func (d *Due) removeWhere(match func(DueTimer) bool) []DueTimer {
	var out []DueTimer
	kept := d.timers[:0]
	for _, t := range d.timers {
		switch {
		case !match(t):
			kept = append(kept, t)
		case !d.drop(t):
			out = append(out, t)
		}
	}
	if len(kept) < len(d.timers) {
		clear(d.timers[len(kept):])
		d.timers = kept
		heap.Init(&d.timers)
	}
	return out
}

// ScanLead is how far ahead of a look for ready work the noted timers fall
// due that the look leaves out (Upcoming): longer than a look takes on a
// busy server, so a timer falling due meanwhile is not taken by both the
// look and, by name or from the cache, another fetcher of this provider.
const ScanLead = 50 * time.Millisecond

// maxScanExclusions bounds the instances a look leaves out for noted timers.
const maxScanExclusions = 1024

// Upcoming returns the instances with noted timers a look for ready work at
// now leaves out, for this provider takes them by name or from its cache as
// they fall due, and a look that locked one first would make that turn
// stale: those due by now+ScanLead. A look owed by the ScanGate, which runs
// before the timers ready are taken, leaves out only those not due yet: it
// takes the others in their turn, so they never starve while looks are owed
// one after another.
func (d *Due) Upcoming(now time.Time, owed bool) []string {
	if d == nil {
		return nil
	}
	var after time.Time
	if owed {
		after = now
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	until := now.Add(cmp.Or(d.lead, ScanLead))
	var out []string
	var seen map[string]bool // made once a timer is left out: most looks leave out none
	for _, t := range d.timers {
		if len(out) == maxScanExclusions {
			break
		}
		if t.at.After(after) && !t.at.After(until) && !d.taken[t.Instance][t.Item] && !seen[t.Instance] {
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[t.Instance] = true
			out = append(out, t.Instance)
		}
	}
	return out
}

// Earlier returns the earlier of t (zero: none) and the earliest noted
// timer's due time, even one past. A fetcher that looked for ready work and
// found none returns it as the next due time: a timer that fell due while
// the look ran, which the look left out (Upcoming), is taken by the next try
// instead of when the poll interval ends.
func (d *Due) Earlier(t time.Time) time.Time {
	if d == nil {
		return t
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if top := d.top(); !top.IsZero() && (t.IsZero() || top.Before(t)) {
		return top
	}
	return t
}

// SetScanLead sets how far ahead Upcoming looks (tests use a long one, so
// that a timer noted ahead is certain to be within it).
func (d *Due) SetScanLead(lead time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lead = lead
}

// Taken records that a fetch delivered instance's timer item (stored form):
// if it is noted, ReadyTimers will not hand it out, so no one builds a turn
// for a timer already gone.
func (d *Due) Taken(instance, item string) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.noted[instance] > 0 {
		if d.taken[instance] == nil {
			d.taken[instance] = map[string]bool{}
		}
		d.taken[instance][item] = true
	}
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
	// The earliest time still ahead: d.at stays behind once it passed, the
	// heap's top moves on.
	var at time.Time
	now := time.Now()
	for _, t := range []time.Time{d.at, d.top()} {
		if t.After(now) && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	return at, replan
}

// top is the due time of the earliest timer kept by name (zero: none).
func (d *Due) top() time.Time {
	if len(d.timers) == 0 {
		return time.Time{}
	}
	return d.timers[0].at
}

// DueTimer is a noted timer: its instance and, when noted with NoteTimer
// or Acked, its message in stored form.
type DueTimer struct {
	at       time.Time
	seq      uint64 // the order noted: timers due at once are handed out in it
	Instance string
	Item     string
	// execution and id name the timer for a cancelling ack (Acked); zero
	// when noted otherwise.
	execution, id int64
}

func (t DueTimer) compare(u DueTimer) int {
	return cmp.Or(t.at.Compare(u.at), cmp.Compare(t.seq, u.seq))
}

type timerHeap []DueTimer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].compare(h[j]) < 0 }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)        { *h = append(*h, x.(DueTimer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
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

// Package group is the group commit both stores share. A commit costs a
// round trip, a WAL append and its flush however little it writes, so the
// work that callers submit while batches are under way goes together in
// the next batch: one transaction for all of it. The store's send runs a
// batch and answers each request with its own outcome.
//
// There is no committer goroutine: a caller that finds fewer batches under
// way than the group allows runs one itself (a leader), with whatever has
// queued, so an uncontended commit costs no hand-off between goroutines.
// Once a batch (its own or another leader's) holds its request, a leader
// sends no more and passes the lead to the oldest waiting caller that holds
// none: leading on would make it wait for others' work.
//
// It imports nothing of the module.
package group

import (
	"context"
	"errors"
	"sync"
)

// ErrStopped answers requests submitted after Stop, and those still queued
// then.
var ErrStopped = errors.New("group commit stopped")

// Request is one caller's work in a batch. The store's send answers it once
// with Answer.
type Request[W any] struct {
	Ctx  context.Context
	Work W
	done chan error
	lead chan struct{} // closed when this caller is to send the next batches
	// hasLead is set when its caller is given a lead, by add or by release
	// (which closes lead), under Group.mu.
	hasLead bool
	// taken is set when a leader takes it into a batch, under Group.mu.
	taken bool
}

// NewRequest returns a request for work.
func NewRequest[W any](ctx context.Context, work W) *Request[W] {
	return &Request[W]{Ctx: ctx, Work: work, done: make(chan error, 1), lead: make(chan struct{})}
}

// Answer gives the request its outcome.
func (r *Request[W]) Answer(err error) { r.done <- err }

// Group holds the requests waiting for a leader.
type Group[W any] struct {
	// MaxBatch bounds how many requests share one batch (at least 1).
	MaxBatch int
	// MaxLeaders bounds how many batches are under way at once (at least 1).
	MaxLeaders int

	mu      sync.Mutex
	pending []*Request[W]
	leading int
	stopped bool
	leaders sync.WaitGroup // one per lead held
}

// Run queues req and returns its answer, leading batches (sent with send)
// when the group has fewer leaders than it may. send answers every request
// of its batch. After Stop, Run returns ErrStopped.
func (g *Group[W]) Run(req *Request[W], send func(batch []*Request[W])) error {
	lead, ok := g.add(req)
	switch {
	case !ok:
		return ErrStopped
	case lead:
		g.lead(req, send)
		return <-req.done
	}
	return g.follow(req, send)
}

// Stop refuses every later request and, once the batches under way are
// sent, every queued one, with ErrStopped.
func (g *Group[W]) Stop() {
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
}

// WaitLeaders waits until no caller leads: after Stop, until the batches
// under way were sent and the queued requests refused.
func (g *Group[W]) WaitLeaders() { g.leaders.Wait() }

// Len is how many requests wait for a batch.
func (g *Group[W]) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending)
}

// Leading is how many leads are held.
func (g *Group[W]) Leading() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.leading
}

// SetMaxLeaders changes MaxLeaders (tests that count batches use 1).
func (g *Group[W]) SetMaxLeaders(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.MaxLeaders = n
}

// add queues req and reports whether its caller must lead; ok is false,
// and nothing queued, once the group has stopped.
func (g *Group[W]) add(req *Request[W]) (lead, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return false, false
	}
	g.pending = append(g.pending, req)
	if g.leading >= max(g.MaxLeaders, 1) {
		return false, true
	}
	g.leading++
	g.leaders.Add(1)
	// A lead passed to req now would be lost: its caller leads already and
	// never waits for one.
	req.hasLead = true
	return true, true
}

// take moves up to MaxBatch waiting requests into batch for own's leader,
// or none once a leader has taken own: own's answer is on its way, and its
// caller must not wait for a batch of others' work. Once the group has
// stopped it takes none and refuses the waiting requests.
func (g *Group[W]) take(own *Request[W], batch []*Request[W]) []*Request[W] {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		g.refuseLocked()
		return batch[:0]
	}
	if own.taken {
		return batch[:0]
	}
	n := min(len(g.pending), max(g.MaxBatch, 1))
	batch = append(batch[:0], g.pending[:n]...)
	for _, req := range batch {
		req.taken = true
	}
	rest := copy(g.pending, g.pending[n:])
	clear(g.pending[rest:])
	g.pending = g.pending[:rest]
	return batch
}

// release passes the lead to the oldest waiting request whose caller holds
// none, or lets it lapse (always, once the group has stopped).
func (g *Group[W]) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		g.refuseLocked()
	}
	for _, req := range g.pending {
		if !req.hasLead {
			req.hasLead = true
			close(req.lead)
			return
		}
	}
	g.leading--
	g.leaders.Done()
}

// refuseLocked answers every waiting request with ErrStopped.
func (g *Group[W]) refuseLocked() {
	for _, req := range g.pending {
		req.taken = true
		req.done <- ErrStopped
	}
	clear(g.pending)
	g.pending = g.pending[:0]
}

// follow waits for queued req's answer, and leads if the lead is passed to it
// first. That lead ends at once if another leader has taken req meanwhile.
func (g *Group[W]) follow(req *Request[W], send func(batch []*Request[W])) error {
	answered, lead, err := g.wait(req)
	if !answered {
		g.lead(req, send)
		return <-req.done
	}
	if lead {
		g.release()
	}
	return err
}

// wait waits until req is answered or the lead is passed to it. The leader
// answers every request it took: its work may be in a transaction that is
// about to commit. lead is also set when another leader answered req after
// the lead had been passed to it (req was still queued then): the caller
// must pass it on (release), or the lead would lapse for good.
func (g *Group[W]) wait(req *Request[W]) (answered, lead bool, err error) {
	select {
	case err = <-req.done:
		g.mu.Lock()
		defer g.mu.Unlock()
		return true, req.hasLead, err
	case <-req.lead:
		return false, true, nil
	}
}

// lead sends batches of the waiting requests until one of its batches or
// another leader's has taken own, then passes the lead on.
func (g *Group[W]) lead(own *Request[W], send func(batch []*Request[W])) {
	defer g.release()
	var batch []*Request[W]
	for {
		if batch = g.take(own, batch); len(batch) == 0 {
			return
		}
		send(batch)
		clear(batch)
	}
}

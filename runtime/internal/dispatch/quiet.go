package dispatch

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// Quiet activity results. A turn that ends with the orchestration waiting
// for all of several activities (WhenAll) would, on the result of one of
// them, only record it and wait on: a fetch, a replay and a commit for
// nothing. The turn notes which results leave its instance's code blocked
// (engine.QuietWaits); when one arrives and the store still holds the history the
// turn ended with, the activity is acked without waking a dispatcher
// (provider.ActivityResult.QuietAfter) and the result waits in the queue for the turn the
// last one runs, which delivers them all. A fan-out of n activities then
// costs one turn where it cost up to n. The set keeps the results it saw
// acked quietly, so that the last result can run that turn from the cached
// history, consuming them (provider.FetchRequest.Deliver): no fetch at all.

// quietSet is the QuietWaits a committed turn left, with the quiet acks of
// its results.
type quietSet struct {
	*engine.QuietWaits
	// lastEvent is the last event of the history the waits were read from.
	lastEvent int64
	// inFlight counts quiet acks not yet answered; settled is closed when
	// it drops to zero (nil while none are in flight).
	inFlight int
	settled  chan struct{}
	// queued are the results acked quietly, in the order their acks returned.
	queued []provider.WorkItem
	// usedAt is when the set was noted or last asked about.
	usedAt time.Time
}

// take counts a quiet result of activity id: its ack is in flight until
// settle.
func (q *quietSet) take(id int64) bool {
	if !q.Take(id) {
		return false
	}
	q.inFlight++
	if q.settled == nil {
		q.settled = make(chan struct{})
	}
	return true
}

// quietSets holds the quiet sets of the instances whose last turn this
// process committed. A set whose instance's later turns run in another
// process, or that was deleted, is never taken again: sets unused for
// quietSetIdle are dropped, and at most maxQuietSets are kept. Dropping one
// only costs its results a turn each.
type quietSets struct {
	mu   sync.Mutex
	sets map[string]*quietSet
	// now is the clock (time.Now when nil).
	now       func() time.Time
	nextSweep time.Time
}

const (
	quietSetIdle = time.Minute
	maxQuietSets = 100_000
)

func (s *quietSets) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// note records the set of a turn that committed (nil: none is quiet). ack's
// events end the history the set belongs to. A turn that recorded no event
// notes none: the history it leaves is the one the instance's previous set
// was read from, so a quiet ack of that set still in flight would pass the
// store's check unseen by this set.
func (s *quietSets) note(instance string, ack provider.OrchestrationAck, waits *engine.QuietWaits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(instance)
	if waits == nil || ack.Metadata.Status.Terminal() || len(ack.HistoryDelta) == 0 {
		return
	}
	q := &quietSet{QuietWaits: waits}
	q.lastEvent = ack.HistoryDelta[len(ack.HistoryDelta)-1].ID
	q.usedAt = s.clock()
	if s.sets == nil {
		s.sets = map[string]*quietSet{}
	}
	s.sets[instance] = q
	s.sweepLocked(q.usedAt)
}

// sweepLocked drops the sets unused for quietSetIdle, every half of that,
// and any beyond maxQuietSets. Sets with quiet acks in flight stay.
func (s *quietSets) sweepLocked(now time.Time) {
	if now.Before(s.nextSweep) && len(s.sets) <= maxQuietSets {
		return
	}
	s.nextSweep = now.Add(quietSetIdle / 2)
	for instance, q := range s.sets {
		if q.inFlight == 0 && (now.Sub(q.usedAt) >= quietSetIdle || len(s.sets) > maxQuietSets) {
			delete(s.sets, instance)
		}
	}
}

// len is how many sets are kept.
func (s *quietSets) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sets)
}

// forget drops the instance's set: a turn of it begins, or the store's
// history is not the one the set was read from.
func (s *quietSets) forget(instance string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(instance)
}

func (s *quietSets) dropLocked(instance string) {
	q := s.sets[instance]
	if q == nil {
		return
	}
	delete(s.sets, instance)
	if q.settled != nil && q.inFlight > 0 {
		// Waiters must not wait for acks of a set no one tracks any more.
		close(q.settled)
		q.settled = nil
	}
}

// take reports, for a quiet completion, the set it was counted in (held):
// its ack must find the history at held.lastEvent and be settled with held.
// A completion that is not quiet (held nil) first waits for the instance's
// quiet acks in flight, so that the turn it brings on finds their results
// queued; queued lists them when every quiet ack of the set settled quiet
// (else nil: which are queued is not known).
func (s *quietSets) take(ctx context.Context, completion *provider.WorkItem) (held *quietSet, queued []provider.WorkItem) {
	s.mu.Lock()
	q := s.sets[completion.Instance]
	if q == nil || q.Execution != completion.ExecutionID {
		s.mu.Unlock()
		return nil, nil
	}
	q.usedAt = s.clock()
	if q.take(completion.ID) {
		s.mu.Unlock()
		return q, nil
	}
	settled := q.settled
	s.mu.Unlock()
	if settled != nil {
		select {
		case <-settled:
		case <-ctx.Done():
			return nil, nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sets[completion.Instance] != q || q.inFlight > 0 {
		return nil, nil
	}
	return nil, slices.Clone(q.queued)
}

// settle ends a quiet ack counted in held. stillQuiet false (the store woke
// dispatchers, or failed) drops the set. A set no longer kept (a turn began,
// or it was swept) only counts the ack out.
func (s *quietSets) settle(completion *provider.WorkItem, held *quietSet, stillQuiet bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	held.inFlight--
	if held.inFlight == 0 && held.settled != nil {
		close(held.settled)
		held.settled = nil
	}
	if s.sets[completion.Instance] != held {
		return
	}
	if !stillQuiet {
		s.dropLocked(completion.Instance)
		return
	}
	held.queued = append(held.queued, *completion)
}

// ackQuietly acks an activity whose result is quiet without waking a
// dispatcher; done is false when the result is not quiet or the store
// cannot tell (the caller then acks as usual). queued are, when not done,
// the results of the instance this process acked quietly, for the turn the
// caller's result brings on (nil when not known).
func (r *Dispatcher) ackQuietly(ctx context.Context, lease *provider.WorkItemLease, completion *provider.WorkItem) (done bool, queued []provider.WorkItem, err error) {
	held, queued := r.quiet.take(ctx, completion)
	if held == nil {
		return false, queued, nil
	}
	c, err := r.p.Commit(ctx, provider.CommitRequest{
		Activity: &provider.ActivityResult{LockToken: lease.LockToken, Result: completion, QuietAfter: held.lastEvent},
	})
	r.quiet.settle(completion, held, c.Quiet && err == nil)
	return true, nil, err
}

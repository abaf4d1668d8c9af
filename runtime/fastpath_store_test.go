package runtime_test

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// fastPaths names the fast paths of the provider contract a pathStore lets
// through.
type fastPaths uint

const (
	pathLease        fastPaths = 1 << iota // provider.TurnCommit.Lease
	pathTurnNext                           // LockNextFor after a locked turn
	pathActivityNext                       // LockNextFor after an activity's result
	pathEagerStart                         // provider.StartRequest.LockFor
	pathDirectStart                        // a provider.TurnNew commit
	pathCached                             // provider.FetchRequest FromCache and Deliver
	pathQuiet                              // provider.ActivityResult.QuietAfter

	// shortcutPaths are the fast paths of a turn's own commit, an activity's
	// and a start's that need no cache.
	shortcutPaths = pathLease | pathActivityNext | pathEagerStart
	allPaths      = shortcutPaths | pathTurnNext | pathDirectStart | pathCached | pathQuiet
)

// pathStore passes calls to a store, declining the fast paths it does not
// allow as a store without them would (the request goes through without
// the field; a TurnNew commit gets ErrUnsupported), and counts what
// passes.
type pathStore struct {
	testStore
	allow fastPaths
	// unfetched: dispatchers' fetches find nothing, and a fetch by name
	// finds the instance held: only the fast paths bring turns.
	unfetched bool
	// handOut, when set, answers the dispatchers' fetches (FromCache) with
	// the turns put in it, and fetches by name go to the store.
	handOut chan *provider.OrchestrationItem
	// failResults fails this many activity results' commits as a
	// restarting database would.
	failResults atomic.Int32

	turnsFetched, activitiesFetched, messagesQueued atomic.Int64
	fetchedByName                                   atomic.Int64
	turnAcks, firstTurns, activityNexts             atomic.Int64
	cachedCommitted, cachedStale, quietAcks         atomic.Int64
	// turns counts every turn a runtime gets to run: fetched, locked by a
	// commit or a start, committed as a direct start or from the cache;
	// fetched and cached count those kinds.
	turns, fetched, cached atomic.Int64
}

func (s *pathStore) allows(p fastPaths) bool { return s.allow&p != 0 }

func (s *pathStore) got(items ...*provider.OrchestrationItem) {
	for _, item := range items {
		if item == nil {
			continue
		}
		s.turns.Add(1)
		if !item.Cached {
			s.fetched.Add(1)
		}
	}
}

func (s *pathStore) Fetch(ctx context.Context, req provider.FetchRequest) ([]*provider.OrchestrationItem, error) {
	if len(req.Deliver) > 0 {
		if !s.allows(pathCached) {
			return nil, nil
		}
		return s.testStore.Fetch(ctx, req)
	}
	req.FromCache = req.FromCache && s.allows(pathCached)
	switch {
	case s.handOut != nil && req.Instance != "":
		s.fetchedByName.Add(1)
	case s.handOut != nil && req.FromCache:
		return s.handOutTurn(ctx, req.PollFor), nil
	case s.unfetched && req.Instance != "":
		return nil, nil
	case s.unfetched:
		idle(ctx, req.PollFor)
		return nil, nil
	}
	items, err := s.testStore.Fetch(ctx, req)
	s.turnsFetched.Add(int64(len(items)))
	s.got(items...)
	return items, err
}

func (s *pathStore) handOutTurn(ctx context.Context, poll time.Duration) []*provider.OrchestrationItem {
	select {
	case item := <-s.handOut:
		return []*provider.OrchestrationItem{item}
	case <-time.After(poll):
	case <-ctx.Done():
	}
	return nil
}

func idle(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func (s *pathStore) FetchWorkItem(ctx context.Context, req provider.FetchWorkRequest) (*provider.WorkItemLease, error) {
	lease, err := s.testStore.FetchWorkItem(ctx, req)
	if lease != nil {
		s.activitiesFetched.Add(1)
	}
	return lease, err
}

func (s *pathStore) EnqueueForOrchestrator(ctx context.Context, req provider.EnqueueRequest) error {
	s.messagesQueued.Add(1)
	return s.testStore.EnqueueForOrchestrator(ctx, req)
}

func (s *pathStore) StartInstance(ctx context.Context, req provider.StartRequest) (*provider.OrchestrationItem, error) {
	s.messagesQueued.Add(1)
	if !s.allows(pathEagerStart) {
		req.LockFor = 0
	}
	item, err := s.testStore.StartInstance(ctx, req)
	s.got(item)
	return item, err
}

func (s *pathStore) Commit(ctx context.Context, req provider.CommitRequest) (provider.Committed, error) {
	if t := req.Turn; t != nil {
		return s.commitTurn(ctx, req)
	}
	if s.failResults.Add(-1) >= 0 {
		return provider.Committed{}, &provider.Error{Op: "commit", Retryable: true, Err: errors.New("connection refused")}
	}
	a := *req.Activity
	if !s.allows(pathQuiet) {
		a.QuietAfter = 0
	}
	if !s.allows(pathActivityNext) {
		req.LockNextFor = 0
	}
	req.Activity = &a
	if req.LockNextFor > 0 {
		s.activityNexts.Add(1)
	}
	c, err := s.testStore.Commit(ctx, req)
	if c.Quiet {
		s.quietAcks.Add(1)
	}
	s.got(c.Next)
	return c, err
}

func (s *pathStore) commitTurn(ctx context.Context, req provider.CommitRequest) (provider.Committed, error) {
	t := *req.Turn
	if !s.allows(pathLease) {
		t.Lease = nil
	}
	if !s.allows(pathTurnNext) {
		req.LockNextFor = 0
	}
	req.Turn = &t
	switch t.Hold {
	case provider.TurnLocked:
		s.turnAcks.Add(1)
	case provider.TurnNew:
		if !s.allows(pathDirectStart) {
			return provider.Committed{}, provider.ErrUnsupported
		}
		s.firstTurns.Add(1)
	}
	c, err := s.testStore.Commit(ctx, req)
	switch {
	case t.Hold == provider.TurnNew && c.Created:
		s.turns.Add(1)
	case t.Hold == provider.TurnCached && err == nil:
		s.cachedCommitted.Add(1)
		if req.Activity != nil {
			s.turns.Add(1) // an activity's cached turn; a timer's was counted when fetched
			s.cached.Add(1)
		}
	case t.Hold == provider.TurnCached && errors.Is(err, provider.ErrStale):
		s.cachedStale.Add(1)
	}
	s.got(c.Next)
	return c, err
}

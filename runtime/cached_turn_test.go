package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// cacheCounts counts how the activity acks of a cachedStore went.
type cacheCounts struct {
	committed, stale, continued atomic.Int64
}

// directShortcuts are the shortcuts a directStore exposes.
type directShortcuts interface {
	testStore
	provider.ActivityLeaser
	provider.ActivityContinuer
	provider.EagerStarter
	provider.FirstTurnCommitter
}

// cachedStore is a directStore (or unfetchedDirectStore) that can also
// commit turns built from store's history cache (provider.CachedTurnCommitter).
type cachedStore struct {
	directShortcuts
	store  testStore
	counts *cacheCounts
}

var _ provider.CachedTurnCommitter = cachedStore{}

func (s cachedStore) CachedTurn(instance string, execution int64, msg provider.WorkItem, queued ...provider.WorkItem) *provider.OrchestrationItem {
	return s.store.(provider.CachedTurnCommitter).CachedTurn(instance, execution, msg, queued...)
}

func (s cachedStore) CommitCachedTurn(ctx context.Context, workToken string, turn *provider.OrchestrationItem, ack provider.OrchestrationAck,
	lease []int, lock time.Duration) ([]*provider.WorkItemLease, error) {
	leases, err := s.store.(provider.CachedTurnCommitter).CommitCachedTurn(ctx, workToken, turn, ack, lease, lock)
	switch {
	case err == nil:
		s.counts.committed.Add(1)
	case errors.Is(err, provider.ErrStale):
		s.counts.stale.Add(1)
	}
	return leases, err
}

func (s cachedStore) AckWorkItemContinuing(ctx context.Context, token string, completion provider.WorkItem, lock time.Duration) (*provider.OrchestrationItem, error) {
	s.counts.continued.Add(1)
	return s.directShortcuts.AckWorkItemContinuing(ctx, token, completion, lock)
}

// settle waits (up to 10 s) until done holds: a wrapper counts a commit
// when the store returns it, just after the commit a waiter may already
// have seen.
func settle(done func() bool) {
	for deadline := time.Now().Add(10 * time.Second); !done() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

func registerTwice(reg *runtime.Registry) {
	runtime.RegisterActivity(reg, "Add", func(_ context.Context, n int) (int, error) { return n + 1, nil })
	runtime.RegisterOrchestration(reg, "Twice", func(ctx *runtime.OrchestrationContext, n int) (int, error) {
		n, err := runtime.Await[int](ctx.CallActivity("Add", n))
		if err != nil {
			return 0, err
		}
		return runtime.Await[int](ctx.CallActivity("Add", n))
	})
}

// TestCachedTurnsCommitOnceAStep: each activity's completion runs the next
// turn from the cached history and commits it with the activity's ack: no
// turn is fetched or locked by an ack, and the outputs are right.
func TestCachedTurnsCommitOnceAStep(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		counting := &countingStore{testStore: store}
		counts := &cacheCounts{}
		reg := runtime.NewRegistry()
		registerTwice(reg)
		client := startRuntime(t, cachedStore{directStore{shortcutStore{counting}}, store, counts}, reg, fastOptions()).Client()
		const n = 10
		for i := range n {
			id := fmt.Sprintf("twice-%d", i)
			if err := client.Start(t.Context(), id, "Twice", i); err != nil {
				t.Fatal(err)
			}
			st := wait(t, client, id)
			if st.Status != runtime.StatusCompleted || st.Output != fmt.Sprint(i+2) {
				t.Fatalf("%s: %s %q %v, want Completed %d", id, st.Status, st.Output, st.Failure, i+2)
			}
		}
		settle(func() bool { return counts.committed.Load() >= 2*n })
		committed, stale, continued := counts.committed.Load(), counts.stale.Load(), counts.continued.Load()
		if committed != 2*n || stale != 0 || continued != 0 || counting.turnsFetched.Load() != 0 {
			t.Fatalf("%d cached turns committed, %d stale, %d activity acks continued, %d turns fetched; want %d, 0, 0, 0",
				committed, stale, continued, counting.turnsFetched.Load(), 2*n)
		}
	})
}

// TestStaleCachedTurnFallsBack: an event queued while the activity ran makes
// its cached turn stale; the activity is then acked as usual, and the turn
// that follows takes both the event and the result.
func TestStaleCachedTurnFallsBack(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		counting := &countingStore{testStore: store}
		counts := &cacheCounts{}
		started, release := make(chan struct{}), make(chan struct{})
		reg := runtime.NewRegistry()
		runtime.RegisterActivity(reg, "Slow", func(_ context.Context, n int) (int, error) {
			close(started)
			<-release
			return n * 10, nil
		})
		runtime.RegisterOrchestration(reg, "Gated", func(ctx *runtime.OrchestrationContext, n int) (int, error) {
			r, err := runtime.Await[int](ctx.CallActivity("Slow", n))
			if err != nil {
				return 0, err
			}
			ev, err := runtime.Await[int](ctx.WaitForEvent("go"))
			return r + ev, err
		})
		// Dispatchers never fetch: the event waits in the queue until the
		// activity's ack takes the instance.
		unfetched := unfetchedDirectStore{unfetchedStore{shortcutStore{counting}}}
		client := startRuntime(t, cachedStore{unfetched, store, counts}, reg, fastOptions()).Client()
		if err := client.Start(t.Context(), "gated", "Gated", 4); err != nil {
			t.Fatal(err)
		}
		<-started
		if err := client.RaiseEvent(t.Context(), "gated", "go", 2); err != nil {
			t.Fatal(err)
		}
		close(release)
		st := wait(t, client, "gated")
		if st.Status != runtime.StatusCompleted || st.Output != "42" {
			t.Fatalf("gated: %s %q %v, want Completed 42", st.Status, st.Output, st.Failure)
		}
		if counts.stale.Load() != 1 || counts.committed.Load() != 0 || counts.continued.Load() != 1 {
			t.Fatalf("%d cached turns stale, %d committed, %d activity acks continued; want 1, 0, 1",
				counts.stale.Load(), counts.committed.Load(), counts.continued.Load())
		}
	})
}

// timerCacheStore is a cachedStore on an unfetchedDirectStore whose
// cached fetches hand out only the turns a test gives it (handOut): turns
// run only when a start commits one, an activity completes, or the runtime
// gets a cached timer turn and commits it or falls back to fetching its
// instance by name.
type timerCacheStore struct {
	cachedStore
	handOut       chan *provider.OrchestrationItem
	fetchedByName atomic.Int64
}

func newTimerCacheStore(store testStore) *timerCacheStore {
	unfetched := unfetchedDirectStore{unfetchedStore{shortcutStore{&countingStore{testStore: store}}}}
	return &timerCacheStore{cachedStore: cachedStore{unfetched, store, &cacheCounts{}}, handOut: make(chan *provider.OrchestrationItem, 1)}
}

// Fetch hands out the turns put in handOut to the dispatchers' fetches
// (which ask FromCache) and passes fetches by name to the store.
func (s *timerCacheStore) Fetch(ctx context.Context, req provider.FetchRequest) ([]*provider.OrchestrationItem, error) {
	if req.Instance != "" {
		s.fetchedByName.Add(1)
		return s.store.Fetch(ctx, req)
	}
	if !req.FromCache {
		return s.cachedStore.Fetch(ctx, req)
	}
	select {
	case item := <-s.handOut:
		return []*provider.OrchestrationItem{item}, nil
	case <-time.After(req.PollFor):
	case <-ctx.Done():
	}
	return nil, nil
}

// dueTimerTurn waits until the timer instance's first turn created is due
// and returns its turn, built from store's cache as the store's cached
// fetch would build it.
func dueTimerTurn(t *testing.T, store testStore, instance string) *provider.OrchestrationItem {
	t.Helper()
	history, err := store.ReadHistory(t.Context(), instance)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range history {
		if ev.Kind != provider.EventTimerCreated {
			continue
		}
		time.Sleep(time.Until(time.UnixMilli(ev.FireAt)) + 10*time.Millisecond)
		timer := provider.WorkItem{Kind: provider.WorkTimerFired, Instance: instance, ExecutionID: 1, ID: ev.ID, FireAt: ev.FireAt}
		turn := store.(provider.CachedTurnCommitter).CachedTurn(instance, 1, timer)
		if turn == nil || !turn.Cached {
			t.Fatalf("no cached turn of %s's timer: %+v", instance, turn)
		}
		return turn
	}
	t.Fatalf("%s created no timer: %+v", instance, history)
	return nil
}

func registerNaps(reg *runtime.Registry) {
	runtime.RegisterOrchestration(reg, "Nap", func(ctx *runtime.OrchestrationContext, _ int) (string, error) {
		_, err := runtime.Await[struct{}](ctx.CreateTimer(200 * time.Millisecond))
		return "rested", err
	})
	runtime.RegisterOrchestration(reg, "NapThenGo", func(ctx *runtime.OrchestrationContext, _ int) (int, error) {
		if _, err := runtime.Await[struct{}](ctx.CreateTimer(200 * time.Millisecond)); err != nil {
			return 0, err
		}
		return runtime.Await[int](ctx.WaitForEvent("go"))
	})
}

// TestTimersFireFromTheCache: a timer's turn a cached fetch hands out
// (provider.FetchRequest.FromCache) runs and commits with the timer's deletion;
// nothing is fetched.
func TestTimersFireFromTheCache(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		s := newTimerCacheStore(store)
		reg := runtime.NewRegistry()
		registerNaps(reg)
		client := startRuntime(t, s, reg, fastOptions()).Client()
		if err := client.Start(t.Context(), "nap", "Nap", 0); err != nil {
			t.Fatal(err)
		}
		s.handOut <- dueTimerTurn(t, store, "nap")
		st := wait(t, client, "nap")
		if st.Status != runtime.StatusCompleted || st.Output != `"rested"` {
			t.Fatalf("nap: %s %q %v, want Completed \"rested\"", st.Status, st.Output, st.Failure)
		}
		settle(func() bool { return s.counts.committed.Load() >= 1 })
		if committed, stale, byName := s.counts.committed.Load(), s.counts.stale.Load(), s.fetchedByName.Load(); committed != 1 || stale != 0 || byName != 0 {
			t.Fatalf("%d cached timer turns committed, %d stale, %d instances fetched by name; want 1, 0, 0", committed, stale, byName)
		}
	})
}

// TestStaleCachedTimerTurnFallsBack: an event queued before the timer's
// cached turn commits makes it stale; the runtime fetches the instance by
// name, and that turn takes the timer and the event.
func TestStaleCachedTimerTurnFallsBack(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		s := newTimerCacheStore(store)
		reg := runtime.NewRegistry()
		registerNaps(reg)
		client := startRuntime(t, s, reg, fastOptions()).Client()
		if err := client.Start(t.Context(), "nap", "NapThenGo", 0); err != nil {
			t.Fatal(err)
		}
		turn := dueTimerTurn(t, store, "nap")
		if err := store.EnqueueForOrchestrator(t.Context(), provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: "nap", Name: "go", Input: "7"}, 0); err != nil {
			t.Fatal(err)
		}
		s.handOut <- turn
		st := wait(t, client, "nap")
		if st.Status != runtime.StatusCompleted || st.Output != "7" {
			t.Fatalf("nap: %s %q %v, want Completed 7", st.Status, st.Output, st.Failure)
		}
		if stale, committed, byName := s.counts.stale.Load(), s.counts.committed.Load(), s.fetchedByName.Load(); stale != 1 || committed != 0 || byName != 1 {
			t.Fatalf("%d cached timer turns stale, %d committed, %d instances fetched by name; want 1, 0, 1", stale, committed, byName)
		}
	})
}

// TestCachedTurnHandsItsActivitySlotOn: with one activity slot, the turn an
// activity's result commits leases the next activity of a sequence into the
// slot the finished one held: nothing is left for the worker queue's fetch.
func TestCachedTurnHandsItsActivitySlotOn(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		counting := &countingStore{testStore: store}
		counts := &cacheCounts{}
		reg := runtime.NewRegistry()
		runtime.RegisterActivity(reg, "Add", func(_ context.Context, n int) (int, error) { return n + 1, nil })
		runtime.RegisterOrchestration(reg, "Five", func(ctx *runtime.OrchestrationContext, n int) (int, error) {
			for range 5 {
				var err error
				if n, err = runtime.Await[int](ctx.CallActivity("Add", n)); err != nil {
					return 0, err
				}
			}
			return n, nil
		})
		opts := fastOptions()
		opts.ActivityConcurrency = 1
		client := startRuntime(t, cachedStore{directStore{shortcutStore{counting}}, store, counts}, reg, opts).Client()
		if err := client.Start(t.Context(), "five", "Five", 10); err != nil {
			t.Fatal(err)
		}
		if st := wait(t, client, "five"); st.Status != runtime.StatusCompleted || st.Output != "15" {
			t.Fatalf("five: %s %q %v, want Completed 15", st.Status, st.Output, st.Failure)
		}
		settle(func() bool { return counts.committed.Load() >= 5 })
		if committed, fetched := counts.committed.Load(), counting.activitiesFetched.Load(); committed != 5 || fetched != 0 {
			t.Fatalf("%d cached turns committed, %d activities fetched; want 5, 0", committed, fetched)
		}
	})
}

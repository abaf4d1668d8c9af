package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/providertest"
	"github.com/duroxide/duroxide-go/runtime"
)

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
		counting := &pathStore{testStore: store, allow: shortcutPaths | pathDirectStart | pathCached}
		counts := counting
		reg := runtime.NewRegistry()
		registerTwice(reg)
		client := startRuntime(t, counting, reg, fastOptions()).Client()
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
		settle(func() bool { return counts.cachedCommitted.Load() >= 2*n })
		committed, stale, continued := counts.cachedCommitted.Load(), counts.cachedStale.Load(), counts.activityNexts.Load()
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
		counting := &pathStore{testStore: store, allow: shortcutPaths | pathDirectStart | pathCached}
		counts := counting
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
		counting.unfetched = true
		client := startRuntime(t, counting, reg, fastOptions()).Client()
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
		if counts.cachedStale.Load() != 1 || counts.cachedCommitted.Load() != 0 || counts.activityNexts.Load() != 1 {
			t.Fatalf("%d cached turns stale, %d committed, %d activity acks continued; want 1, 0, 1",
				counts.cachedStale.Load(), counts.cachedCommitted.Load(), counts.activityNexts.Load())
		}
	})
}

// newTimerCacheStore is a pathStore whose dispatchers' fetches hand out
// only the turns a test gives it (handOut): turns run only when a start
// commits one, an activity completes, or the runtime gets a cached timer
// turn and commits it or falls back to fetching its instance by name.
func newTimerCacheStore(store testStore) *pathStore {
	return &pathStore{testStore: store, allow: shortcutPaths | pathDirectStart | pathCached, unfetched: true,
		handOut: make(chan *provider.OrchestrationItem, 1)}
}

// dueTimerTurn waits until the timer instance's first turn created is due
// and returns its turn, built from store's cache as the store's cached
// fetch would build it.
func dueTimerTurn(t *testing.T, store testStore, instance string) *provider.OrchestrationItem {
	t.Helper()
	history, err := store.ReadHistory(t.Context(), provider.ExecutionRequest{Instance: instance})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range history {
		if ev.Kind != provider.EventTimerCreated {
			continue
		}
		time.Sleep(time.Until(time.UnixMilli(ev.FireAt)) + 10*time.Millisecond)
		timer := provider.WorkItem{Kind: provider.WorkTimerFired, Instance: instance, ExecutionID: 1, ID: ev.ID, FireAt: ev.FireAt}
		turn := providertest.CachedTurn(store, instance, 1, timer)
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
		settle(func() bool { return s.cachedCommitted.Load() >= 1 })
		if committed, stale, byName := s.cachedCommitted.Load(), s.cachedStale.Load(), s.fetchedByName.Load(); committed != 1 || stale != 0 || byName != 0 {
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
		if err := store.EnqueueForOrchestrator(t.Context(), provider.EnqueueRequest{Item: provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: "nap", Name: "go", Input: "7"}}); err != nil {
			t.Fatal(err)
		}
		s.handOut <- turn
		st := wait(t, client, "nap")
		if st.Status != runtime.StatusCompleted || st.Output != "7" {
			t.Fatalf("nap: %s %q %v, want Completed 7", st.Status, st.Output, st.Failure)
		}
		if stale, committed, byName := s.cachedStale.Load(), s.cachedCommitted.Load(), s.fetchedByName.Load(); stale != 1 || committed != 0 || byName != 1 {
			t.Fatalf("%d cached timer turns stale, %d committed, %d instances fetched by name; want 1, 0, 1", stale, committed, byName)
		}
	})
}

// TestCachedTurnHandsItsActivitySlotOn: with one activity slot, the turn an
// activity's result commits leases the next activity of a sequence into the
// slot the finished one held: nothing is left for the worker queue's fetch.
func TestCachedTurnHandsItsActivitySlotOn(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		counting := &pathStore{testStore: store, allow: shortcutPaths | pathDirectStart | pathCached}
		counts := counting
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
		client := startRuntime(t, counting, reg, opts).Client()
		if err := client.Start(t.Context(), "five", "Five", 10); err != nil {
			t.Fatal(err)
		}
		if st := wait(t, client, "five"); st.Status != runtime.StatusCompleted || st.Output != "15" {
			t.Fatalf("five: %s %q %v, want Completed 15", st.Status, st.Output, st.Failure)
		}
		settle(func() bool { return counts.cachedCommitted.Load() >= 5 })
		if committed, fetched := counts.cachedCommitted.Load(), counting.activitiesFetched.Load(); committed != 5 || fetched != 0 {
			t.Fatalf("%d cached turns committed, %d activities fetched; want 5, 0", committed, fetched)
		}
	})
}

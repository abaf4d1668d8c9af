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

func (s cachedStore) CachedTurn(instance string, execution int64, msg provider.WorkItem) *provider.OrchestrationItem {
	return s.store.(provider.CachedTurnCommitter).CachedTurn(instance, execution, msg)
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

package runtime_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// quietStore is a directStore that acks quietly (provider.QuietAcker) and
// counts the acks the store found quiet.
type quietStore struct {
	directShortcuts
	store testStore
	quiet *atomic.Int64
}

func (s quietStore) AckWorkItemQuietly(ctx context.Context, token string, completion provider.WorkItem, lastEvent int64) (bool, error) {
	quiet, err := s.store.(provider.QuietAcker).AckWorkItemQuietly(ctx, token, completion, lastEvent)
	if quiet {
		s.quiet.Add(1)
	}
	return quiet, err
}

// fanRegistry registers Fan: n activities Pow(0..n-1) awaited with WhenAll,
// the sum of their squares returned.
func fanRegistry() *runtime.Registry {
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Pow", func(_ context.Context, n int) (int, error) { return n * n, nil })
	runtime.RegisterOrchestration(reg, "Fan", func(ctx *runtime.OrchestrationContext, n int) (int, error) {
		fs := make([]*runtime.Future, n)
		for i := range fs {
			fs[i] = ctx.CallActivity("Pow", i)
		}
		if err := ctx.WhenAll(fs...); err != nil {
			return 0, err
		}
		sum := 0
		for _, f := range fs {
			v, _ := runtime.Await[int](f)
			sum += v
		}
		return sum, nil
	})
	return reg
}

// TestFanOutRunsOneTurnForItsResults: of the three results a WhenAll waits
// for, the first two are acked quietly and the third brings on the one turn
// that delivers all three. The activities are leased with the turn that
// schedules them, after it noted its quiet set, and dispatchers never
// fetch (no turn runs between the results), so the count is exact; were a
// quiet result lost, its instance would never complete.
func TestFanOutRunsOneTurnForItsResults(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		counting := &countingStore{testStore: store}
		var quietAcks atomic.Int64
		reg := fanRegistry()
		client := startRuntime(t, quietStore{unfetchedDirectStore{unfetchedStore{shortcutStore{counting}}}, store, &quietAcks}, reg, fastOptions()).Client()
		const n = 5
		for i := range n {
			id := fmt.Sprintf("fan-%d", i)
			if err := client.Start(t.Context(), id, "Fan", 3); err != nil {
				t.Fatal(err)
			}
			st := wait(t, client, id)
			if st.Status != runtime.StatusCompleted || st.Output != "5" {
				t.Fatalf("%s: %s %q %v, want Completed 5 (0+1+4)", id, st.Status, st.Output, st.Failure)
			}
		}
		if got := quietAcks.Load(); got != 2*n {
			t.Fatalf("%d quiet acks, want %d: two of each instance's three results", got, 2*n)
		}
	})
}

// quietCachedStore is a cachedStore that also acks quietly.
type quietCachedStore struct {
	cachedStore
	quiet *atomic.Int64
}

func (s quietCachedStore) AckWorkItemQuietly(ctx context.Context, token string, completion provider.WorkItem, lastEvent int64) (bool, error) {
	return quietStore{s.directShortcuts, s.store, s.quiet}.AckWorkItemQuietly(ctx, token, completion, lastEvent)
}

// TestFanInTurnCommitsFromTheCache: the result that completes a WhenAll
// runs the turn that gathers every result from the cached history, consuming
// the results acked quietly before it, and commits it with its ack: no
// activity ack continues into a fetched turn, no turn is fetched.
func TestFanInTurnCommitsFromTheCache(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		counting := &countingStore{testStore: store}
		counts := &cacheCounts{}
		var quietAcks atomic.Int64
		reg := fanRegistry()
		direct := unfetchedDirectStore{unfetchedStore{shortcutStore{counting}}}
		client := startRuntime(t, quietCachedStore{cachedStore{direct, store, counts}, &quietAcks}, reg, fastOptions()).Client()
		const n = 5
		for i := range n {
			id := fmt.Sprintf("fan-%d", i)
			if err := client.Start(t.Context(), id, "Fan", 4); err != nil {
				t.Fatal(err)
			}
			st := wait(t, client, id)
			if st.Status != runtime.StatusCompleted || st.Output != "14" {
				t.Fatalf("%s: %s %q %v, want Completed 14 (0+1+4+9)", id, st.Status, st.Output, st.Failure)
			}
		}
		settle(func() bool { return counts.committed.Load() >= n })
		committed, stale, continued := counts.committed.Load(), counts.stale.Load(), counts.continued.Load()
		if quietAcks.Load() != 3*n || committed != n || stale != 0 || continued != 0 || counting.turnsFetched.Load() != 0 {
			t.Fatalf("%d quiet acks, %d cached turns committed, %d stale, %d activity acks continued, %d turns fetched; want %d, %d, 0, 0, 0",
				quietAcks.Load(), committed, stale, continued, counting.turnsFetched.Load(), 3*n, n)
		}
	})
}

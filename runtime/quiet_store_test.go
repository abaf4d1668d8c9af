package runtime_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/duroxide/duroxide-go/runtime"
)

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
		counting := &pathStore{testStore: store, allow: shortcutPaths | pathDirectStart | pathQuiet, unfetched: true}
		quietAcks := &counting.quietAcks
		reg := fanRegistry()
		client := startRuntime(t, counting, reg, fastOptions()).Client()
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

// TestFanInTurnCommitsFromTheCache: the result that completes a WhenAll
// runs the turn that gathers every result from the cached history, consuming
// the results acked quietly before it, and commits it with its ack: no
// activity ack continues into a fetched turn, no turn is fetched.
func TestFanInTurnCommitsFromTheCache(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		counting := &pathStore{testStore: store, allow: shortcutPaths | pathDirectStart | pathCached | pathQuiet, unfetched: true}
		counts, quietAcks := counting, &counting.quietAcks
		reg := fanRegistry()
		client := startRuntime(t, counting, reg, fastOptions()).Client()
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
		settle(func() bool { return counts.cachedCommitted.Load() >= n })
		committed, stale, continued := counts.cachedCommitted.Load(), counts.cachedStale.Load(), counts.activityNexts.Load()
		if quietAcks.Load() != 3*n || committed != n || stale != 0 || continued != 0 || counting.turnsFetched.Load() != 0 {
			t.Fatalf("%d quiet acks, %d cached turns committed, %d stale, %d activity acks continued, %d turns fetched; want %d, %d, 0, 0, 0",
				quietAcks.Load(), committed, stale, continued, counting.turnsFetched.Load(), 3*n, n)
		}
	})
}

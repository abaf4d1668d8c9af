package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
)

// queueUndecodable queues a message for instance that no one can decode,
// visible at once: it is queued delayed and then overwritten, so no
// dispatcher takes it before it is broken.
func queueUndecodable(t *testing.T, store testStore, instance string) {
	t.Helper()
	ctx := t.Context()
	if err := store.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: instance, Name: "x", Input: `1`}, Delay: time.Hour}); err != nil {
		t.Fatal(err)
	}
	var err error
	switch s := store.(type) {
	case *sqlite.Provider:
		_, err = s.DB().ExecContext(ctx, `UPDATE orchestrator_queue SET work_item = '{"kind":', visible_at = 0 WHERE instance_id = ?`, instance)
	case *postgres.Provider:
		_, err = s.Pool().Exec(ctx, `UPDATE orchestrator_queue SET work_item = '{"kind":', visible_at = now() WHERE instance_id = $1`, instance)
	default:
		t.Fatalf("no SQL for %T", store)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// settledQueues waits until no message or activity of the store is queued.
func settledQueues(t *testing.T, store testStore) {
	t.Helper()
	settle(func() bool {
		d, err := store.GetQueueDepths(t.Context())
		return err == nil && d.Orchestrator == 0 && d.Worker == 0
	})
}

// An execution failed by an undecodable message (its status written without
// an event) stays failed: the result of its outstanding activity is not
// committed from the cached history, as a fetched turn would not commit it.
func TestCachedTurnRefusedOnAFailedExecution(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		reg, started, release := gatedRegistry()
		opts := fastOptions()
		opts.MaxAttempts = 1
		// No renewal while the activity runs: it would learn that the
		// execution ended and report nothing.
		opts.ActivityRenewInterval = time.Hour
		client := startRuntime(t, store, reg, opts).Client()
		if err := client.Start(t.Context(), "gated", "Gated", nil); err != nil {
			t.Fatal(err)
		}
		<-started
		queueUndecodable(t, store, "gated")
		if st := wait(t, client, "gated"); st.Status != runtime.StatusFailed {
			t.Fatalf("after the undecodable message: %s, want Failed", st.Status)
		}
		close(release)
		settledQueues(t, store)
		st, err := client.Status(t.Context(), "gated")
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != runtime.StatusFailed {
			t.Fatalf("after the activity's result: %s %s, want it still Failed", st.Status, st.Output)
		}
	})
}

// A cancelled activity is not awaited: the later steps of its execution
// run from the cached history.
func TestCancelledActivityLeavesLaterStepsCached(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		counting := &pathStore{testStore: store, allow: shortcutPaths | pathDirectStart | pathCached}
		counts := counting
		reg := runtime.NewRegistry()
		registerTwice(reg)
		runtime.RegisterActivity(reg, "Block", func(ctx context.Context, _ struct{}) (int, error) {
			<-ctx.Done()
			return 0, ctx.Err()
		})
		runtime.RegisterOrchestration(reg, "CancelThenChain", func(ctx *runtime.OrchestrationContext, n int) (int, error) {
			slow, fast := ctx.CallActivity("Block", nil), ctx.CallActivity("Add", n)
			ctx.Select(slow, fast) // fast wins; slow is cancelled
			n, err := runtime.Await[int](fast)
			for range 2 {
				if err != nil {
					return 0, err
				}
				n, err = runtime.Await[int](ctx.CallActivity("Add", n))
			}
			return n, err
		})
		opts := fastOptions()
		opts.ActivityRenewInterval = 50 * time.Millisecond
		client := startRuntime(t, counting, reg, opts).Client()
		const n = 3
		for i := range n {
			id := fmt.Sprintf("chain-%d", i)
			if err := client.Start(t.Context(), id, "CancelThenChain", i); err != nil {
				t.Fatal(err)
			}
			if st := wait(t, client, id); st.Status != runtime.StatusCompleted || st.Output != fmt.Sprint(i+3) {
				t.Fatalf("%s: %s %q %v, want Completed %d", id, st.Status, st.Output, st.Failure, i+3)
			}
		}
		settle(func() bool { return counts.cachedCommitted.Load() >= 2*n })
		if got := counts.cachedCommitted.Load(); got < 2*n {
			t.Fatalf("%d cached turns committed, want at least %d: the two steps after the cancellation, per instance", got, 2*n)
		}
	})
}

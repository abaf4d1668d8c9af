package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// TerminateNow ends an instance and its children in the store when no worker
// is left to run the terminating turns: the client runs them itself.
func TestTerminateNowWithoutWorkers(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		reg := runtime.NewRegistry()
		runtime.RegisterOrchestration(reg, "Child", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			return runtime.Await[string](ctx.WaitForEvent("never"))
		})
		runtime.RegisterOrchestration(reg, "Parent", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			return runtime.Await[string](ctx.CallSubOrchestration("Child", struct{}{}, runtime.WithInstanceID("child")))
		})
		rt := runtime.New(store, reg, fastOptions())
		if err := rt.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		c := runtime.NewClient(store)
		if err := c.Start(t.Context(), "parent", "Parent", nil); err != nil {
			t.Fatal(err)
		}
		waitRunning(t, c, "child")
		if err := rt.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Never run by a worker: only a queued start.
		if err := c.Start(t.Context(), "queued", "Parent", nil); err != nil {
			t.Fatal(err)
		}

		for _, id := range []string{"parent", "queued"} {
			if err := c.TerminateNow(t.Context(), id, "pool deleted"); err != nil {
				t.Fatalf("terminate %s now: %v", id, err)
			}
		}
		for _, id := range []string{"parent", "child", "queued"} {
			st, err := c.Status(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if st.Status != runtime.StatusTerminated || !strings.Contains(st.Failure.Message, "pool deleted") {
				t.Fatalf("%s: status %s failure %+v, want Terminated for the pool's deletion", id, st.Status, st.Failure)
			}
		}
		if err := c.TerminateNow(t.Context(), "parent", "again"); !errors.Is(err, provider.ErrInstanceFinished) {
			t.Fatalf("terminating a terminated instance: %v, want ErrInstanceFinished", err)
		}
	})
}

func waitRunning(t *testing.T, c *runtime.Client, id string) {
	t.Helper()
	ctx := timeout(t, 30*time.Second)
	for ctx.Err() == nil {
		if st, err := c.Status(ctx, id); err == nil && st.Status == runtime.StatusRunning {
			return
		}
	}
	t.Fatalf("%s never ran", id)
}

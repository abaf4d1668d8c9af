package runtime_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/duroxide/duroxide-go/runtime"
)

// A finished activity whose result cannot be reported for a while keeps its
// result: it runs once, its attempt count stays 1, and the orchestration
// gets the result. Before, the item was handed back, the activity ran again
// and the failed report counted toward the poison limit.
func TestActivityResultKeptWhileTheStoreIsDown(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		flaky := &pathStore{testStore: store}
		flaky.failResults.Store(4)
		var runs atomic.Int32
		var attempts atomic.Int32
		reg := runtime.NewRegistry()
		runtime.RegisterActivity(reg, "Once", func(ctx context.Context, in string) (string, error) {
			runs.Add(1)
			info, _ := runtime.ActivityInfoFrom(ctx)
			attempts.Store(int32(info.Attempt))
			return "done " + in, nil
		})
		runtime.RegisterOrchestration(reg, "CallOnce", func(ctx *runtime.OrchestrationContext, in string) (string, error) {
			return runtime.Await[string](ctx.CallActivity("Once", in))
		})
		opts := fastOptions()
		opts.MaxAttempts = 3 // fewer than the failed reports: counting them would fail the activity
		startRuntime(t, flaky, reg, opts)
		c := runtime.NewClient(store)
		if err := c.Start(t.Context(), "once", "CallOnce", "x"); err != nil {
			t.Fatal(err)
		}
		st := wait(t, c, "once")
		var out string
		if err := st.DecodeOutput(&out); err != nil || st.Status != runtime.StatusCompleted || out != "done x" {
			t.Fatalf("status %s output %q (%v), failure %+v", st.Status, out, err, st.Failure)
		}
		if runs.Load() != 1 || attempts.Load() != 1 || flaky.failResults.Load() >= 0 {
			t.Fatalf("activity ran %d times (last attempt %d); %d failed reports left", runs.Load(), attempts.Load(), flaky.failResults.Load())
		}
	})
}

package runtime_test

import (
	"errors"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

func approvalRegistry() *runtime.Registry {
	reg := runtime.NewRegistry()
	runtime.RegisterOrchestration(reg, "Approve", func(ctx *runtime.OrchestrationContext, _ string) (string, error) {
		return runtime.Await[string](ctx.WaitForEvent("approval"))
	})
	return reg
}

// Messages nobody can read are refused at the sender, not queued and dropped.
func TestClientRefusesMessagesForUnknownAndFinishedInstances(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		c := runtime.NewClient(store)
		ctx := t.Context()
		if err := c.RaiseEvent(ctx, "ghost", "approval", "yes"); !errors.Is(err, provider.ErrNotFound) {
			t.Fatalf("raise on an unknown instance: %v, want ErrNotFound", err)
		}
		if err := c.Terminate(ctx, "ghost", "why"); !errors.Is(err, provider.ErrNotFound) {
			t.Fatalf("terminate an unknown instance: %v, want ErrNotFound", err)
		}
		if err := c.Cancel(ctx, "ghost", "why"); !errors.Is(err, provider.ErrNotFound) {
			t.Fatalf("cancel an unknown instance: %v, want ErrNotFound", err)
		}
		began := time.Now()
		if _, err := c.Wait(timeout(t, time.Minute), "ghost"); !errors.Is(err, provider.ErrNotFound) {
			t.Fatalf("wait for an unknown instance: %v, want ErrNotFound", err)
		}
		if waited := time.Since(began); waited > 5*time.Second {
			t.Fatalf("wait for an unknown instance took %v; it should say so at once", waited)
		}

		startRuntime(t, store, approvalRegistry(), fastOptions())
		if err := c.Start(ctx, "a", "Approve", ""); err != nil {
			t.Fatal(err)
		}
		if err := c.RaiseEvent(ctx, "a", "approval", "yes"); err != nil {
			t.Fatalf("raise on an instance being started: %v", err)
		}
		if st := wait(t, c, "a"); st.Output != `"yes"` {
			t.Fatalf("output %s, want \"yes\"", st.Output)
		}
		if err := c.RaiseEvent(ctx, "a", "approval", "again"); !errors.Is(err, provider.ErrInstanceFinished) {
			t.Fatalf("raise on a finished instance: %v, want ErrInstanceFinished", err)
		}
		if err := c.Terminate(ctx, "a", "late"); !errors.Is(err, provider.ErrInstanceFinished) {
			t.Fatalf("terminate a finished instance: %v, want ErrInstanceFinished", err)
		}
	})
}

func TestStartWithEventAndPendingStatus(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		c := runtime.NewClient(store)
		ctx := t.Context()
		if err := c.Start(ctx, "b", "Approve", "", runtime.StartWithEvent("approval", "signed")); err != nil {
			t.Fatal(err)
		}
		st, err := c.Status(ctx, "b")
		if err != nil || st.Status != runtime.StatusPending {
			t.Fatalf("status before any worker: %+v, %v; want Pending", st, err)
		}
		if st.Orchestration != "Approve" || st.CreatedAt.IsZero() || time.Since(st.CreatedAt) > time.Minute {
			t.Fatalf("a pending status says orchestration %q, created %v; want Approve, when it was queued", st.Orchestration, st.CreatedAt)
		}
		startRuntime(t, store, approvalRegistry(), fastOptions())
		st = wait(t, c, "b")
		var out string
		if err := st.DecodeOutput(&out); err != nil || out != "signed" {
			t.Fatalf("output %q (%v), want the event raised with the start", out, err)
		}
		if err := c.Start(ctx, "b", "Approve", "", runtime.StartWithEvent("approval", "late")); !errors.Is(err, provider.ErrAlreadyExists) {
			t.Fatalf("start-with-event on a finished instance: %v, want ErrAlreadyExists", err)
		}
	})
}

func TestDecodeCustomStatus(t *testing.T) {
	reg := runtime.NewRegistry()
	type progress struct{ Done, Of int }
	runtime.RegisterOrchestration(reg, "Progress", func(ctx *runtime.OrchestrationContext, _ string) (string, error) {
		ctx.SetCustomStatus(progress{Done: 2, Of: 3})
		return "ok", nil
	})
	store := openStore(t, "")
	c := runtime.NewClient(store)
	if err := c.Start(t.Context(), "p", "Progress", ""); err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(t.Context(), "p")
	if err != nil {
		t.Fatal(err)
	}
	var none progress
	if ok, err := st.DecodeCustomStatus(&none); ok || err != nil {
		t.Fatalf("pending instance: custom status ok=%v err=%v, want none", ok, err)
	}
	startRuntime(t, store, reg, fastOptions())
	st = wait(t, c, "p")
	var got progress
	if ok, err := st.DecodeCustomStatus(&got); !ok || err != nil || got != (progress{2, 3}) {
		t.Fatalf("custom status %+v ok=%v err=%v, want {2 3}", got, ok, err)
	}
}

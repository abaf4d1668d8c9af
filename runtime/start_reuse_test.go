package runtime_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

func helloRegistry() *runtime.Registry {
	reg := runtime.NewRegistry()
	runtime.RegisterOrchestration(reg, "Hello", func(_ *runtime.OrchestrationContext, name string) (string, error) {
		return "Hello, " + name + "!", nil
	})
	return reg
}

// TestStartRefusesATakenID: a start of an ID that a finished instance or a
// queued start holds fails, naming the instance and its status, and changes
// nothing; it used to succeed and be dropped.
func TestStartRefusesATakenID(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		ctx := t.Context()
		c := runtime.NewClient(store)
		if err := c.Start(ctx, "queued-1", "Hello", "a"); err != nil {
			t.Fatal(err)
		}
		err := c.Start(ctx, "queued-1", "Hello", "b")
		if !errors.Is(err, provider.ErrAlreadyExists) || err.Error() != `start "queued-1": instance already exists (Pending)` {
			t.Fatalf("second start of a queued ID: %v, want ErrAlreadyExists (Pending)", err)
		}
		rt := startRuntime(t, store, helloRegistry(), fastOptions())
		if st := wait(t, c, "queued-1"); st.Output != `"Hello, a!"` {
			t.Fatalf("output %s, want the first start's", st.Output)
		}
		for name, client := range map[string]*runtime.Client{"NewClient": c, "Runtime.Client": rt.Client()} {
			err := client.Start(ctx, "queued-1", "Hello", "c")
			if !errors.Is(err, provider.ErrAlreadyExists) || err.Error() != `start "queued-1": instance already exists (Completed)` {
				t.Fatalf("%s: start of a completed ID: %v, want ErrAlreadyExists (Completed)", name, err)
			}
		}
		if depths, err := store.GetQueueDepths(ctx); err != nil || depths.Orchestrator+depths.Delayed+depths.Locked != 0 {
			t.Fatalf("refused starts left messages queued: %+v, %v", depths, err)
		}
	})
}

// TestStartIDReusePolicies: AllowFinished replaces a finished instance and
// refuses a running one; TerminateRunning replaces a running one, whose code
// stops; both work through the runtime's direct and eager starts too.
func TestStartIDReusePolicies(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		ctx := t.Context()
		reg := helloRegistry()
		runtime.RegisterOrchestration(reg, "Wait", func(ctx *runtime.OrchestrationContext, _ string) (string, error) {
			return runtime.Await[string](ctx.WaitForEvent("go"))
		})
		rt := startRuntime(t, store, reg, fastOptions())
		for name, c := range map[string]*runtime.Client{"NewClient": runtime.NewClient(store), "Runtime.Client": rt.Client()} {
			t.Run(name, func(t *testing.T) {
				id := "reuse-" + name
				if err := c.Start(ctx, id, "Hello", "first"); err != nil {
					t.Fatal(err)
				}
				wait(t, c, id)
				if err := c.Start(ctx, id, "Wait", "", runtime.StartIDReuse(runtime.IDReuseAllowFinished)); err != nil {
					t.Fatalf("allow-finished start over a completed instance: %v", err)
				}
				if err := c.RaiseEvent(ctx, id, "go", "ok"); err != nil {
					t.Fatal(err)
				}
				if st := wait(t, c, id); st.Orchestration != "Wait" || st.Output != `"ok"` {
					t.Fatalf("the new run: %s %s, want Wait \"ok\"", st.Orchestration, st.Output)
				}
				if history, err := c.History(ctx, id); err != nil || history[0].Name != "Wait" || countStarted(history) != 1 {
					t.Fatalf("history after the reuse: %v (%v), want the new run's only", history, err)
				}

				running := id + "-running"
				if err := c.Start(ctx, running, "Wait", ""); err != nil {
					t.Fatal(err)
				}
				err := c.Start(ctx, running, "Hello", "x", runtime.StartIDReuse(runtime.IDReuseAllowFinished))
				var taken *provider.AlreadyExistsError
				if !errors.As(err, &taken) || taken.Status == provider.StatusCompleted {
					t.Fatalf("allow-finished start over a running instance: %v, want it refused", err)
				}
				if err := c.Start(ctx, running, "Hello", "again", runtime.StartIDReuse(runtime.IDReuseTerminateRunning)); err != nil {
					t.Fatalf("terminate-running start over a running instance: %v", err)
				}
				if st := wait(t, c, running); st.Orchestration != "Hello" || st.Output != `"Hello, again!"` {
					t.Fatalf("the new run: %s %s, want Hello \"Hello, again!\"", st.Orchestration, st.Output)
				}
			})
		}
		if err := runtime.NewClient(store).Start(ctx, "x", "Hello", "", runtime.StartIDReuse("Sometimes")); !errors.Is(err, provider.ErrInvalidArgument) {
			t.Fatalf("an unknown policy: %v, want ErrInvalidArgument", err)
		}
	})
}

// TestConcurrentStartsOfOneIDRunOnce: of many clients starting one ID at
// once, through the runtime's direct start or plainly, one wins; the others
// are told the ID is taken.
func TestConcurrentStartsOfOneIDRunOnce(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		rt := startRuntime(t, store, helloRegistry(), fastOptions())
		clients := []*runtime.Client{runtime.NewClient(store), rt.Client()}
		errs := make([]error, 8)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() { errs[i] = clients[i%2].Start(t.Context(), "once", "Hello", fmt.Sprint(i)) })
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, provider.ErrAlreadyExists):
				t.Fatal(err)
			}
		}
		if won != 1 {
			t.Fatalf("%d of %d concurrent starts went through, want 1: %v", won, len(errs), errs)
		}
		wait(t, clients[0], "once")
	})
}

func countStarted(history []provider.Event) int {
	n := 0
	for _, ev := range history {
		if ev.Kind == provider.EventOrchestrationStarted {
			n++
		}
	}
	return n
}

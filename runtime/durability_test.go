package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// Item 3: a turn slower than the lock timeout keeps its lock (it is renewed),
// so no other dispatcher re-runs it and it is not poisoned.
func TestSlowTurnKeepsItsLock(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		var firstRuns atomic.Int32
		reg := runtime.NewRegistry()
		runtime.RegisterOrchestration(reg, "Slow", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			if !ctx.IsReplaying() {
				firstRuns.Add(1)
				time.Sleep(1500 * time.Millisecond) // slow code (a long computation)
			}
			return "done", nil
		})
		opts := fastOptions()
		opts.OrchestrationLockTimeout = 500 * time.Millisecond
		opts.StepTimeout = -1
		opts.MaxAttempts = 1
		startRuntime(t, store, reg, opts)
		startRuntime(t, store, reg, opts) // a second dispatcher that would take over an expired lock
		c := runtime.NewClient(store)
		if err := c.Start(t.Context(), "slow", "Slow", nil); err != nil {
			t.Fatal(err)
		}
		st := wait(t, c, "slow")
		if st.Status != runtime.StatusCompleted || firstRuns.Load() != 1 {
			t.Fatalf("status %s failure %+v, first runs %d; want Completed after one run", st.Status, st.Failure, firstRuns.Load())
		}
	})
}

// Item 4: an orchestration that blocks outside the engine does not hold its
// slot: other instances complete, Shutdown returns, and the blocked one fails
// at the poison limit with a configuration error that says why.
func TestBlockedOrchestrationDoesNotStarveOthers(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		block := make(chan struct{})
		defer close(block)
		reg := runtime.NewRegistry()
		runtime.RegisterOrchestration(reg, "Stuck", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			<-block // a Go channel: invisible to the engine
			return "", nil
		})
		runtime.RegisterOrchestration(reg, "Fine", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			return "ok", nil
		})
		opts := fastOptions()
		opts.OrchestrationConcurrency = 1
		opts.StepTimeout = 100 * time.Millisecond
		opts.MaxAttempts = 3
		rt := runtime.New(store, reg, opts)
		if err := rt.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		c := runtime.NewClient(store)
		for _, id := range []string{"stuck", "fine-1", "fine-2"} {
			name := "Fine"
			if id == "stuck" {
				name = "Stuck"
			}
			if err := c.Start(t.Context(), id, name, nil); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range []string{"fine-1", "fine-2"} {
			if st := wait(t, c, id); st.Status != runtime.StatusCompleted {
				t.Fatalf("%s: %s", id, st.Status)
			}
		}
		st := wait(t, c, "stuck")
		if st.Status != runtime.StatusFailed || st.Failure.Class != runtime.ErrorConfiguration || st.Failure.Kind != runtime.FailureBlocked ||
			!strings.Contains(st.Failure.Message, `instance "stuck"`) || !strings.Contains(st.Failure.Message, "durability_test.go") {
			t.Fatalf("stuck: status %s failure %+v", st.Status, st.Failure)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Fatalf("shutdown with a blocked coroutine: %v", err)
		}
	})
}

// Item 5: a go statement that awaits fails that instance with a clear error
// and leaves the process (this test binary) and other work alone.
func TestGoStatementFailsOnlyItsInstance(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		reg := runtime.NewRegistry()
		runtime.RegisterActivity(reg, "Work", func(ctx context.Context, _ struct{}) (string, error) { return "w", nil })
		runtime.RegisterOrchestration(reg, "Wrong", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			ch := make(chan string, 1)
			go func() {
				v, _ := runtime.Await[string](ctx.CallActivity("Work", nil))
				ch <- v
			}()
			return <-ch, nil
		})
		runtime.RegisterOrchestration(reg, "Right", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			return runtime.Await[string](ctx.CallActivity("Work", nil))
		})
		opts := fastOptions()
		opts.StepTimeout = 5 * time.Second
		startRuntime(t, store, reg, opts)
		c := runtime.NewClient(store)
		for id, name := range map[string]string{"wrong": "Wrong", "right": "Right"} {
			if err := c.Start(t.Context(), id, name, nil); err != nil {
				t.Fatal(err)
			}
		}
		if st := wait(t, c, "right"); st.Status != runtime.StatusCompleted {
			t.Fatalf("right: %s", st.Status)
		}
		st := wait(t, c, "wrong")
		if st.Status != runtime.StatusFailed || st.Failure.Kind != runtime.FailureForeignGoroutine || !strings.Contains(st.Failure.Message, "use ctx.Go") {
			t.Fatalf("wrong: status %s failure %+v", st.Status, st.Failure)
		}
	})
}

// Item 7: a sub-orchestration whose instance ID exists answers its parent
// with a clear failure instead of leaving it waiting.
func TestSubOrchestrationWithTakenIDFailsTheParentsAwait(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		reg := runtime.NewRegistry()
		runtime.RegisterOrchestration(reg, "Child", func(ctx *runtime.OrchestrationContext, in string) (string, error) {
			return "child " + in, nil
		})
		runtime.RegisterOrchestration(reg, "Parent", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			_, err := runtime.Await[string](ctx.CallSubOrchestration("Child", "again", runtime.WithInstanceID("taken")))
			var te *runtime.TaskError
			if errors.As(err, &te) && te.Kind == runtime.FailureAlreadyExists {
				return "refused: " + te.Message, nil
			}
			return "", err
		})
		startRuntime(t, store, reg, fastOptions())
		c := runtime.NewClient(store)
		if err := c.Start(t.Context(), "taken", "Child", "first"); err != nil {
			t.Fatal(err)
		}
		wait(t, c, "taken")
		if err := c.Start(t.Context(), "parent", "Parent", nil); err != nil {
			t.Fatal(err)
		}
		st := wait(t, c, "parent")
		var out string
		_ = st.DecodeOutput(&out)
		if st.Status != runtime.StatusCompleted || !strings.Contains(out, `instance "taken" already exists`) {
			t.Fatalf("parent: status %s output %q failure %+v", st.Status, out, st.Failure)
		}
	})
}

// Client.Cancel is observed by the orchestration: its wait fails with
// ErrCanceled and it compensates on a context that is not cancelled.
func TestClientCancelIsObserved(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		reg := runtime.NewRegistry()
		runtime.RegisterActivity(reg, "Undo", func(ctx context.Context, _ struct{}) (string, error) { return "undone", nil })
		runtime.RegisterOrchestration(reg, "Saga", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			_, err := runtime.Await[string](ctx.WaitForEvent("approve"))
			if !errors.Is(err, runtime.ErrCanceled) || ctx.Err() == nil {
				return "", err
			}
			if _, err := runtime.Await[string](ctx.CallActivity("Undo", nil)); !errors.Is(err, runtime.ErrCanceled) {
				return "", errors.New("work on the cancelled context should fail at once")
			}
			return runtime.Await[string](ctx.WithoutCancel().CallActivity("Undo", nil))
		})
		startRuntime(t, store, reg, fastOptions())
		c := runtime.NewClient(store)
		if err := c.Start(t.Context(), "saga", "Saga", nil); err != nil {
			t.Fatal(err)
		}
		waitForEvents(t, c, "saga", 2)
		if err := c.Cancel(t.Context(), "saga", "user gave up"); err != nil {
			t.Fatal(err)
		}
		if st := wait(t, c, "saga"); st.Status != runtime.StatusCompleted || st.Output != `"undone"` {
			t.Fatalf("status %s output %s failure %+v", st.Status, st.Output, st.Failure)
		}
	})
}

// Item 12: payloads are stored as JSON values (not escaped strings), round
// trip exactly, and the payload limit fails the caller, not the store.
func TestLargePayloadsRoundTripAndAreBounded(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		type doc struct {
			Text string   `json:"text"`
			Tags []string `json:"tags"`
		}
		reg := runtime.NewRegistry()
		runtime.RegisterActivity(reg, "Echo", func(_ context.Context, d doc) (doc, error) { return d, nil })
		runtime.RegisterActivity(reg, "Huge", func(_ context.Context, _ struct{}) (string, error) {
			return strings.Repeat("x", runtime.MaxPayloadBytes), nil
		})
		runtime.RegisterOrchestration(reg, "Echo", func(ctx *runtime.OrchestrationContext, d doc) (doc, error) {
			return runtime.Await[doc](ctx.CallActivity("Echo", d))
		})
		runtime.RegisterOrchestration(reg, "Huge", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			return runtime.Await[string](ctx.CallActivity("Huge", nil))
		})
		startRuntime(t, store, reg, fastOptions())
		c := runtime.NewClient(store)

		in := doc{Text: strings.Repeat(`say "hi" \ <b> `, 1<<16), Tags: []string{"a", "ü"}}
		if err := c.Start(t.Context(), "echo", "Echo", in); err != nil {
			t.Fatal(err)
		}
		st := wait(t, c, "echo")
		var out doc
		if err := st.DecodeOutput(&out); err != nil || out.Text != in.Text || len(out.Tags) != 2 || out.Tags[1] != "ü" {
			t.Fatalf("status %s, output differs (err %v)", st.Status, err)
		}
		history, err := store.ReadHistory(t.Context(), provider.ExecutionRequest{Instance: "echo"})
		if err != nil {
			t.Fatal(err)
		}
		if history[0].Input != history[1].Input || history[len(history)-1].Output != st.Output {
			t.Fatal("history payloads differ from what was started and returned")
		}

		err = c.Start(t.Context(), "too-big", "Echo", doc{Text: strings.Repeat("x", runtime.MaxPayloadBytes)})
		var le *runtime.LimitError
		if !errors.As(err, &le) || le.What != "payload" {
			t.Fatalf("Start with an oversized input: %v, want a payload LimitError", err)
		}

		if err := c.Start(t.Context(), "huge", "Huge", nil); err != nil {
			t.Fatal(err)
		}
		st = wait(t, c, "huge")
		if st.Status != runtime.StatusFailed || st.Failure == nil || st.Failure.Kind != runtime.FailureLimit {
			t.Fatalf("an oversized activity result: status %s failure %+v, want Failed kind limit", st.Status, st.Failure)
		}
	})
}

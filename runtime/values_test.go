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

// tallyRegistry registers Tally: each execution adds 1 to the durable value
// "count" three times, an activity between each, and continues as new until
// it ran executions times; then it waits for "done" and returns the count.
func tallyRegistry() *runtime.Registry {
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Noop", func(context.Context, int) (int, error) { return 0, nil })
	runtime.RegisterOrchestration(reg, "Tally", func(ctx *runtime.OrchestrationContext, executions int) (int, error) {
		for range 3 {
			var count int
			if _, err := ctx.Value("count", &count); err != nil {
				return 0, err
			}
			if err := ctx.SetValue("count", count+1); err != nil {
				return 0, err
			}
			if _, err := runtime.Await[int](ctx.CallActivity("Noop", count)); err != nil {
				return 0, err
			}
		}
		if err := ctx.SetValue("stage", "waiting"); err != nil {
			return 0, err
		}
		if executions > 1 {
			return 0, ctx.ContinueAsNew(executions - 1)
		}
		if _, err := runtime.Await[string](ctx.WaitForEvent("done")); err != nil {
			return 0, err
		}
		ctx.ClearValue("stage")
		var count int
		_, err := ctx.Value("count", &count)
		return count, err
	})
	return reg
}

// Values read, changed and written back survive replays and continue-as-new,
// and clients read them while the instance runs and after it ends.
func TestValuesReadModifyWriteAcrossExecutions(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		startRuntime(t, store, tallyRegistry(), fastOptions())
		client := runtime.NewClient(store)
		if err := client.Start(t.Context(), "tally", "Tally", 3); err != nil {
			t.Fatal(err)
		}
		waitForValue(t, client, "tally", "count", `9`, 3)
		var stage string
		if ok, err := client.Value(t.Context(), "tally", "stage", &stage); err != nil || !ok || stage != "waiting" {
			t.Fatalf("stage while waiting: %q %v %v, want waiting", stage, ok, err)
		}
		if err := client.RaiseEvent(t.Context(), "tally", "done", "now"); err != nil {
			t.Fatal(err)
		}
		st := wait(t, client, "tally")
		if st.Status != runtime.StatusCompleted || st.Output != "9" {
			t.Fatalf("got %s %s %v, want Completed 9", st.Status, st.Output, st.Failure)
		}
		all, err := client.Values(t.Context(), "tally")
		if err != nil || len(all) != 1 || string(all["count"]) != "9" {
			t.Fatalf("values after the end: %v %v, want only count=9", all, err)
		}
		h, err := store.ReadHistory(t.Context(), provider.ExecutionRequest{Instance: "tally"})
		if err != nil {
			t.Fatal(err)
		}
		if got := h[0].Values["count"]; got != "6" {
			t.Errorf("the third execution's OrchestrationStarted records count=%q, want the 6 it began with", got)
		}
		// stage, carried in as "waiting", is set to the same value: no event.
		if n := countKinds(h, provider.EventValueSet); n != 3 {
			t.Errorf("ValueSet events in the third execution: %d, want 3 (count three times)", n)
		}
		if n := countKinds(h, provider.EventValueCleared); n != 1 {
			t.Errorf("ValueCleared events in the third execution: %d, want 1 (stage)", n)
		}
	})
}

func countKinds(h []provider.Event, kind provider.EventKind) int {
	n := 0
	for _, ev := range h {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// waitForValue waits until instance's current execution is execution and
// its value key reads want.
func waitForValue(t *testing.T, c *runtime.Client, instance, key, want string, execution int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		all, err := c.Values(t.Context(), instance)
		st, serr := c.Status(t.Context(), instance)
		if err == nil && serr == nil && string(all[key]) == want && st.ExecutionID == execution {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("value %s of %s: %s (%v), execution %v (%v); want %s in execution %d", key, instance, all[key], err, st, serr, want, execution)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The limits refuse the call with a clear error and change nothing.
func TestValueLimits(t *testing.T) {
	store := openStore(t, "")
	reg := runtime.NewRegistry()
	runtime.RegisterOrchestration(reg, "Limits", func(ctx *runtime.OrchestrationContext, _ string) ([]string, error) {
		var got []string
		note := func(err error) { got = append(got, errorKind(err)) }
		note(ctx.SetValue("big", strings.Repeat("x", runtime.MaxValueBytes)))
		note(ctx.SetValue("", 1))
		note(ctx.SetValue(strings.Repeat("k", runtime.MaxValueKeyBytes+1), 1))
		for i := range runtime.MaxValueKeys {
			if err := ctx.SetValue(string(rune('A'+i)), i); err != nil {
				return nil, err
			}
		}
		note(ctx.SetValue("one-too-many", 1))
		note(ctx.SetValue("A", "replacing a key is fine"))
		ctx.ClearValue("B")
		note(ctx.SetValue("now-there-is-room", 1))
		return append(got, strings.Join(ctx.ValueKeys()[:3], ",")), nil
	})
	startRuntime(t, store, reg, fastOptions())
	client := runtime.NewClient(store)
	if err := client.Start(t.Context(), "limits", "Limits", ""); err != nil {
		t.Fatal(err)
	}
	st := wait(t, client, "limits")
	want := `["limit","invalid","invalid","limit","ok","ok","A,C,D"]`
	if st.Status != runtime.StatusCompleted || st.Output != want {
		t.Fatalf("got %s %s %v, want Completed %s", st.Status, st.Output, st.Failure, want)
	}
	all, err := client.Values(t.Context(), "limits")
	if err != nil || len(all) != runtime.MaxValueKeys || all["big"] != nil {
		t.Fatalf("stored values: %d keys, big=%s, %v; want %d keys and no big", len(all), all["big"], err, runtime.MaxValueKeys)
	}
}

func errorKind(err error) string {
	var limit *runtime.LimitError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &limit):
		return "limit"
	default:
		return "invalid"
	}
}

func TestValuesGoWithTheInstance(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		reg := runtime.NewRegistry()
		runtime.RegisterOrchestration(reg, "Keep", func(ctx *runtime.OrchestrationContext, v string) (string, error) {
			return v, ctx.SetValue("kept", v)
		})
		startRuntime(t, store, reg, fastOptions())
		client := runtime.NewClient(store)
		if err := client.Start(t.Context(), "keep", "Keep", "x"); err != nil {
			t.Fatal(err)
		}
		wait(t, client, "keep")
		var v string
		if ok, err := client.Value(t.Context(), "keep", "kept", &v); !ok || err != nil || v != "x" {
			t.Fatalf("value: %q %v %v", v, ok, err)
		}
		if ok, err := client.Value(t.Context(), "keep", "never-set", &v); ok || err != nil {
			t.Fatalf("a key never set: %v %v, want not found and no error", ok, err)
		}
		if _, err := client.Delete(t.Context(), "keep", false); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Value(t.Context(), "keep", "kept", &v); !errors.Is(err, provider.ErrNotFound) {
			t.Fatalf("value of a deleted instance: %v, want ErrNotFound", err)
		}
	})
}

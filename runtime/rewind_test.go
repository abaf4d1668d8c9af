package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// pipeline is three steps; Charge fails (after its retries) until fixed
// is set. calls counts each activity's runs.
type pipeline struct {
	fixed atomic.Bool
	mu    sync.Mutex
	calls map[string]int
}

func (p *pipeline) count(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[name]
}

func (p *pipeline) register(reg *runtime.Registry) {
	p.calls = map[string]int{}
	step := func(name string, fail func() bool) {
		runtime.RegisterActivity(reg, name, func(_ context.Context, in string) (string, error) {
			p.mu.Lock()
			p.calls[name]++
			p.mu.Unlock()
			if fail() {
				return "", errors.New(name + " is down")
			}
			return in + ">" + name, nil
		})
	}
	step("Reserve", func() bool { return false })
	step("Charge", func() bool { return !p.fixed.Load() })
	step("Ship", func() bool { return false })
	policy := runtime.RetryPolicy{MaxAttempts: 2, InitialInterval: 10 * time.Millisecond}
	runtime.RegisterOrchestration(reg, "Pipeline", func(ctx *runtime.OrchestrationContext, order string) (string, error) {
		ctx.SetCustomStatus("reserving")
		out, err := runtime.Await[string](ctx.CallActivity("Reserve", order))
		if err != nil {
			return "", err
		}
		ctx.SetCustomStatus("charging")
		if out, err = runtime.Await[string](ctx.CallActivity("Charge", out, runtime.WithRetry(policy))); err != nil {
			return "", err
		}
		return runtime.Await[string](ctx.CallActivity("Ship", out))
	})
	// Parent runs two children of Pipeline: the second fails with it.
	runtime.RegisterOrchestration(reg, "Parent", func(ctx *runtime.OrchestrationContext, _ string) (string, error) {
		first, err := runtime.Await[string](ctx.CallSubOrchestration("Hello", "first"))
		if err != nil {
			return "", err
		}
		second, err := runtime.Await[string](ctx.CallSubOrchestration("Pipeline", "second"))
		return first + "|" + second, err
	})
	runtime.RegisterActivity(reg, "Greet", func(_ context.Context, s string) (string, error) { return "hi " + s, nil })
	runtime.RegisterOrchestration(reg, "Hello", func(ctx *runtime.OrchestrationContext, s string) (string, error) {
		return runtime.Await[string](ctx.CallActivity("Greet", s))
	})
}

// A failed instance rewound after its cause is fixed completes as a new
// execution that does not run its completed steps again; the failed
// execution keeps its history.
func TestRewindRunsTheFailingStepAgain(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		p := &pipeline{}
		reg := runtime.NewRegistry()
		p.register(reg)
		startRuntime(t, store, reg, fastOptions())
		c := runtime.NewClient(store)
		if err := c.Start(t.Context(), "order-1", "Pipeline", "o1"); err != nil {
			t.Fatal(err)
		}
		if st := wait(t, c, "order-1"); st.Status != runtime.StatusFailed {
			t.Fatalf("order-1: %s, want Failed", st.Status)
		}
		failed, _ := c.History(t.Context(), "order-1")

		p.fixed.Store(true)
		res, err := c.Rewind(t.Context(), "order-1")
		if err != nil {
			t.Fatal(err)
		}
		if res.Execution != 2 || res.Step != "Charge" || res.Kept != 3 || res.Kept+res.Dropped != len(failed) {
			t.Errorf("rewind %+v of a %d-event history, want execution 2 re-running Charge", res, len(failed))
		}
		st := wait(t, c, "order-1")
		var out string
		if err := st.DecodeOutput(&out); err != nil || st.Status != runtime.StatusCompleted || out != "o1>Reserve>Charge>Ship" || st.ExecutionID != 2 {
			t.Fatalf("after the rewind: %s %s execution %d", st.Status, st.Output, st.ExecutionID)
		}
		if got := fmt.Sprint(p.count("Reserve"), p.count("Charge"), p.count("Ship")); got != "1 3 1" {
			t.Errorf("calls Reserve, Charge, Ship = %s, want 1 3 1 (Reserve not run again; Charge 2 failed attempts and 1 more)", got)
		}
		if cs := *st.CustomStatus; cs != `"charging"` {
			t.Errorf("custom status %s, want the replayed one", cs)
		}
		executions, _ := store.ListExecutions(t.Context(), provider.InstanceRequest{Instance: "order-1"})
		first, _ := store.ReadHistory(t.Context(), provider.ExecutionRequest{Instance: "order-1", ExecutionID: 1})
		second, _ := store.ReadHistory(t.Context(), provider.ExecutionRequest{Instance: "order-1", ExecutionID: 2})
		if fmt.Sprint(executions) != "[1 2]" || len(first) != len(failed) || first[len(first)-1].Kind != provider.EventOrchestrationFailed {
			t.Errorf("executions %v; execution 1 has %d events, want the failed history of %d", executions, len(first), len(failed))
		}
		if len(second) < res.Kept || second[0].ExecutionID != 2 || second[res.Kept].Kind != provider.EventActivityScheduled || second[res.Kept].Name != "Charge" {
			t.Errorf("execution 2 starts %+v / %+v, want the kept events then Charge scheduled", second[0], second[min(res.Kept, len(second)-1)])
		}

		// Refusals: a completed instance, an unknown one, a child.
		if _, err := c.Rewind(t.Context(), "order-1"); !errors.Is(err, provider.ErrNotRewindable) {
			t.Errorf("rewind of a completed instance: %v, want ErrNotRewindable", err)
		}
		if _, err := c.Rewind(t.Context(), "nobody"); !errors.Is(err, provider.ErrNotFound) {
			t.Errorf("rewind of an unknown instance: %v, want ErrNotFound", err)
		}
	})
}

// RewindToStart runs the whole execution again; a parent's rewind keeps
// the child that completed and starts the failed one again under a new ID;
// a child itself cannot be rewound.
func TestRewindToStartAndChildren(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		p := &pipeline{}
		reg := runtime.NewRegistry()
		p.register(reg)
		startRuntime(t, store, reg, fastOptions())
		c := runtime.NewClient(store)
		if err := c.Start(t.Context(), "parent-1", "Parent", ""); err != nil {
			t.Fatal(err)
		}
		if st := wait(t, c, "parent-1"); st.Status != runtime.StatusFailed {
			t.Fatalf("parent-1: %s, want Failed", st.Status)
		}
		if _, err := c.Rewind(t.Context(), "parent-1::1::2"); !errors.Is(err, provider.ErrNotRewindable) {
			t.Errorf("rewind of a child: %v, want ErrNotRewindable", err)
		}
		// Rewound before the fix, it fails again; rewound after, it completes.
		res, err := c.Rewind(t.Context(), "parent-1")
		if err != nil || res.Step != "Pipeline" {
			t.Fatalf("rewind parent-1: %+v %v, want its failed child re-run", res, err)
		}
		if st := wait(t, c, "parent-1"); st.Status != runtime.StatusFailed || st.ExecutionID != 2 {
			t.Fatalf("parent-1 rewound before the fix: %s at execution %d, want Failed at 2", st.Status, st.ExecutionID)
		}
		p.fixed.Store(true)
		if res, err = c.Rewind(t.Context(), "parent-1"); err != nil || res.Execution != 3 {
			t.Fatalf("second rewind of parent-1: %+v %v", res, err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		st, err := c.Wait(ctx, "parent-1")
		if err != nil {
			st, _ = c.Status(t.Context(), "parent-1")
			h, _ := c.History(t.Context(), "parent-1")
			t.Fatalf("parent-1 after the rewind: %+v %+v\n%+v", st, st.LastError, h)
		}
		var out string
		if err := st.DecodeOutput(&out); err != nil || st.Status != runtime.StatusCompleted || out != "hi first|second>Reserve>Charge>Ship" {
			t.Fatalf("parent-1 after the rewind: %s %s", st.Status, st.Output)
		}
		children, _ := store.ListChildren(t.Context(), provider.InstanceRequest{Instance: "parent-1"})
		if fmt.Sprint(children) != "[parent-1::1::1 parent-1::1::2 parent-1::2::2 parent-1::3::2]" {
			t.Errorf("children %v, want the first kept through both rewinds, and each run of the second", children)
		}

		if err := c.Start(t.Context(), "order-2", "Pipeline", "o2"); err != nil {
			t.Fatal(err)
		}
		wait(t, c, "order-2")
		p.fixed.Store(false)
		if err := c.Start(t.Context(), "order-3", "Pipeline", "o3"); err != nil {
			t.Fatal(err)
		}
		if st := wait(t, c, "order-3"); st.Status != runtime.StatusFailed {
			t.Fatalf("order-3: %s", st.Status)
		}
		reserves := p.count("Reserve")
		p.fixed.Store(true)
		res, err = c.Rewind(t.Context(), "order-3", runtime.RewindToStart())
		if err != nil || res.Kept != 1 || res.Step != "" {
			t.Fatalf("rewind to start: %+v %v, want only the start kept", res, err)
		}
		if _, err := c.Rewind(t.Context(), "order-3"); err == nil {
			// The first rewind may already have run; then order-3 is no longer Failed.
			t.Error("a second rewind was accepted")
		} else if !errors.Is(err, provider.ErrNotRewindable) {
			t.Errorf("second rewind: %v, want ErrNotRewindable", err)
		}
		if st := wait(t, c, "order-3"); st.Status != runtime.StatusCompleted || p.count("Reserve") != reserves+1 {
			t.Errorf("order-3 after a rewind to start: %s, Reserve ran %d more times, want 1", st.Status, p.count("Reserve")-reserves)
		}
	})
}

package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/runtime/runtimetest"
)

// shipping registers version 1 of an orchestration, or a changed build of it.
func shipping(change string) *runtime.Registry {
	reg := runtime.NewRegistry()
	for _, name := range []string{"Reserve", "Pack", "Audit", "Ship"} {
		runtime.RegisterActivity(reg, name, func(_ context.Context, in string) (string, error) { return name + ":" + in, nil })
	}
	runtime.RegisterOrchestration(reg, "Shipping", func(ctx *runtime.OrchestrationContext, item string) (string, error) {
		steps := []string{"Reserve", "Pack"}
		switch change {
		case "renamed":
			steps = []string{"Reserve", "Audit"}
		case "inserted":
			steps = []string{"Reserve", "Audit", "Pack"}
		case "shorter":
			steps = []string{"Reserve"}
		}
		for _, s := range steps {
			if _, err := runtime.Await[string](ctx.CallActivity(s, item)); err != nil {
				return "", err
			}
		}
		if change == "returns early" {
			return "skipped", nil
		}
		if change != "no timer" {
			if err := ctx.CreateTimer(time.Hour).Await(nil); err != nil {
				return "", err
			}
		}
		return runtime.Await[string](ctx.CallActivity("Ship", item))
	})
	return reg
}

// recordShipping runs version 1 and returns its history: to the end, or
// stopped while the instance waits for its hour-long timer, or terminated there.
func recordShipping(t *testing.T, stop string) []provider.Event {
	env := runtimetest.New(t, shipping(""))
	inst := env.Start("Shipping", "book")
	var err error
	switch stop {
	case "waiting":
		err = inst.RunFor(30 * time.Minute)
	case "terminated":
		env.After(30*time.Minute, func() { inst.Terminate("cancelled order") })
		err = inst.Run()
	default:
		err = inst.Run()
	}
	if err != nil {
		t.Fatal(err)
	}
	return inst.History()
}

func TestReplayFindsTheFirstMismatch(t *testing.T) {
	cases := []struct {
		history, change  string
		eventID          int64
		expected, actual string // substrings; empty: compatible
	}{
		{history: "finished"},
		{history: "waiting"},
		{history: "terminated"},
		// History: 1 started, 2 Reserve scheduled, 3 its result, 4 Pack scheduled, 5 its result, 6 timer.
		{history: "finished", change: "renamed", eventID: 4, expected: "Pack", actual: "Audit"},
		{history: "waiting", change: "inserted", eventID: 4, expected: "Pack", actual: "Audit"},
		{history: "finished", change: "shorter", eventID: 4, expected: "Pack", actual: "TimerCreated"},
		{history: "waiting", change: "no timer", eventID: 6, expected: "TimerCreated", actual: "Ship"},
		{history: "waiting", change: "returns early", eventID: 6, expected: "TimerCreated", actual: "returned"},
	}
	for _, c := range cases {
		t.Run(c.history+"/"+c.change, func(t *testing.T) {
			err := runtime.Replay(shipping(c.change), recordShipping(t, c.history))
			if c.expected == "" {
				if err != nil {
					t.Fatalf("unchanged code: %v", err)
				}
				return
			}
			var nd *runtime.NondeterminismError
			if !errors.As(err, &nd) {
				t.Fatalf("err = %v, want a NondeterminismError", err)
			}
			if nd.EventID != c.eventID || !strings.Contains(nd.Expected, c.expected) || !strings.Contains(nd.Actual, c.actual) {
				t.Fatalf("mismatch at event %d: expected %q, actual %q; want event %d, %q, %q",
					nd.EventID, nd.Expected, nd.Actual, c.eventID, c.expected, c.actual)
			}
		})
	}
}

func TestReplayRefusesAMalformedHistory(t *testing.T) {
	if err := runtime.Replay(shipping(""), nil); err == nil {
		t.Fatal("empty history replayed")
	}
	h := recordShipping(t, "finished")
	if err := runtime.Replay(shipping(""), h[1:]); err == nil || !strings.Contains(err.Error(), "OrchestrationStarted") {
		t.Fatalf("history without its start: %v", err)
	}
	if err := runtime.Replay(runtime.NewRegistry(), h); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Fatalf("unregistered orchestration: %v", err)
	}
}

// ordering registers an orchestration whose decisions derive from its
// instance ID, in the ways the input names: a child with the default ID, a
// child named with ctx.NewGUID, an activity chosen by the instance's prefix.
func ordering() *runtime.Registry {
	reg := runtime.NewRegistry()
	for _, name := range []string{"Standard", "Express"} {
		runtime.RegisterActivity(reg, name, func(_ context.Context, in string) (string, error) { return name + ":" + in, nil })
	}
	runtime.RegisterOrchestration(reg, "Pack", func(_ *runtime.OrchestrationContext, in string) (string, error) { return "packed " + in, nil })
	runtime.RegisterOrchestration(reg, "Order", func(ctx *runtime.OrchestrationContext, uses string) (string, error) {
		if strings.Contains(uses, "child") {
			if _, err := runtime.Await[string](ctx.CallSubOrchestration("Pack", "default ID")); err != nil {
				return "", err
			}
		}
		if strings.Contains(uses, "guid") {
			id := runtime.WithInstanceID("pack-" + ctx.NewGUID())
			if _, err := runtime.Await[string](ctx.CallSubOrchestration("Pack", "GUID", id)); err != nil {
				return "", err
			}
		}
		step := "Standard"
		if strings.Contains(uses, "instance") && strings.HasPrefix(ctx.InstanceID(), "vip-") {
			step = "Express"
		}
		return runtime.Await[string](ctx.CallActivity(step, uses))
	})
	return reg
}

// A history recorded by a real runtime replays against the same code when
// the replay knows the instance, and is reported as replayed without what
// the code needs, not as a mismatch, when it does not.
func TestReplayKnowsTheInstance(t *testing.T) {
	store := openStore(t, "")
	startRuntime(t, store, ordering(), fastOptions())
	client := runtime.NewClient(store)
	for _, uses := range []string{"child", "guid", "instance", "child guid instance"} {
		t.Run(uses, func(t *testing.T) {
			id := "vip-" + strings.ReplaceAll(uses, " ", "-")
			if err := client.Start(t.Context(), id, "Order", uses); err != nil {
				t.Fatal(err)
			}
			if st := wait(t, client, id); st.Status != runtime.StatusCompleted {
				t.Fatalf("%s ended %s: %+v", id, st.Status, st.Failure)
			}
			history, err := client.History(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if err := runtime.Replay(ordering(), history, runtime.ReplayInstance(id)); err != nil {
				t.Fatalf("unchanged code, instance given: %v", err)
			}
			err = runtime.Replay(ordering(), history)
			var nd *runtime.NondeterminismError
			if !errors.Is(err, runtime.ErrReplayNeedsInstance) || errors.As(err, &nd) {
				t.Fatalf("unchanged code, no instance: %v; want ErrReplayNeedsInstance, not a mismatch", err)
			}
		})
	}
}

package runtimetest_test

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

type order struct {
	ID     int
	Amount int
}

// checkout waits an hour for a cooling-off period, charges with retries
// minutes apart, then ships.
func checkout(ctx *runtime.OrchestrationContext, o order) (string, error) {
	ctx.SetCustomStatus("cooling off")
	if err := ctx.CreateTimer(time.Hour).Await(nil); err != nil {
		return "", err
	}
	ctx.SetCustomStatus("charging")
	policy := runtime.RetryPolicy{MaxAttempts: 4, InitialInterval: 2 * time.Minute, Multiplier: 2}
	receipt, err := runtime.Await[string](ctx.CallActivity("Charge", o, runtime.WithRetry(policy)))
	if err != nil {
		return "", err
	}
	return runtime.Await[string](ctx.CallActivity("Ship", receipt))
}

func checkoutRegistry() *runtime.Registry {
	reg := runtime.NewRegistry()
	runtime.RegisterOrchestration(reg, "Checkout", checkout)
	runtime.RegisterActivity(reg, "Charge", func(context.Context, order) (string, error) {
		return "", errors.New("the real payment service is not reachable from tests")
	})
	runtime.RegisterActivity(reg, "Ship", func(_ context.Context, receipt string) (string, error) {
		return "shipped against " + receipt, nil
	})
	return reg
}

func TestTimeSkippingRetriesAndOverride(t *testing.T) {
	env := runtimetest.New(t, checkoutRegistry())
	attempts := 0
	runtimetest.OverrideActivity(env, "Charge", func(_ context.Context, o order) (string, error) {
		if attempts++; attempts < 3 {
			return "", errors.New("card declined, try again")
		}
		return "receipt-7", nil
	})
	began := time.Now()
	inst := env.Start("Checkout", order{ID: 7, Amount: 100})
	if err := inst.Run(); err != nil {
		t.Fatal(err)
	}
	var out string
	if err := inst.Status().DecodeOutput(&out); err != nil || out != "shipped against receipt-7" {
		t.Fatalf("output %q (%v); status %+v", out, err, inst.Status())
	}
	if got := env.ActivityCalls("Charge"); got != 3 {
		t.Fatalf("Charge ran %d times, want 3", got)
	}
	// An hour, then backoffs of 2 and 4 minutes.
	if got, want := env.Elapsed(), time.Hour+6*time.Minute; got != want {
		t.Fatalf("virtual time %v, want %v", got, want)
	}
	if wall := time.Since(began); wall > time.Second {
		t.Fatalf("an hour of virtual time took %v of wall time", wall)
	}
}

func TestFailureAndHistory(t *testing.T) {
	env := runtimetest.New(t, checkoutRegistry())
	inst := env.Start("Checkout", order{ID: 8})
	if err := inst.Run(); err != nil {
		t.Fatal(err)
	}
	st := inst.Status()
	if st.Status != runtime.StatusFailed || st.Failure == nil || !strings.Contains(st.Failure.Message, "not reachable") {
		t.Fatalf("status %s failure %+v, want Failed with the activity's error", st.Status, st.Failure)
	}
	if got := env.ActivityCalls("Charge"); got != 4 {
		t.Fatalf("Charge ran %d times, want the policy's 4 attempts", got)
	}
	h := inst.History()
	if h[0].Kind != provider.EventOrchestrationStarted || h[len(h)-1].Kind != provider.EventOrchestrationFailed {
		t.Fatalf("history from %s to %s", h[0].Kind, h[len(h)-1].Kind)
	}
}

func approvalRegistry() *runtime.Registry {
	reg := runtime.NewRegistry()
	runtime.RegisterOrchestration(reg, "Approval", func(ctx *runtime.OrchestrationContext, _ string) (string, error) {
		ctx.SetCustomStatus("waiting for approval")
		approval, timeout := ctx.WaitForEvent("approve"), ctx.CreateTimer(24*time.Hour)
		if ctx.Select(approval, timeout) == 1 {
			return "expired", nil
		}
		who, err := runtime.Await[string](approval)
		return "approved by " + who, err
	})
	return reg
}

func TestRaiseAtAPointOfTheRun(t *testing.T) {
	t.Run("when the custom status says so", func(t *testing.T) {
		env := runtimetest.New(t, approvalRegistry())
		inst := env.Start("Approval", "")
		err := inst.RunUntil(func() bool {
			var stage string
			ok, _ := inst.Status().DecodeCustomStatus(&stage)
			return ok && stage == "waiting for approval"
		})
		if err != nil {
			t.Fatal(err)
		}
		inst.RaiseEvent("approve", "ada")
		if err := inst.Run(); err != nil {
			t.Fatal(err)
		}
		if out := inst.Status().Output; out != `"approved by ada"` {
			t.Fatalf("output %s", out)
		}
	})
	t.Run("at a virtual time", func(t *testing.T) {
		env := runtimetest.New(t, approvalRegistry())
		inst := env.Start("Approval", "")
		env.After(23*time.Hour, func() { inst.RaiseEvent("approve", "grace") })
		if err := inst.Run(); err != nil {
			t.Fatal(err)
		}
		if out := inst.Status().Output; out != `"approved by grace"` || env.Elapsed() != 23*time.Hour {
			t.Fatalf("output %s after %v", out, env.Elapsed())
		}
	})
	t.Run("too late", func(t *testing.T) {
		env := runtimetest.New(t, approvalRegistry())
		inst := env.Start("Approval", "")
		env.After(25*time.Hour, func() { inst.RaiseEvent("approve", "late") })
		if err := inst.Run(); err != nil {
			t.Fatal(err)
		}
		if out := inst.Status().Output; out != `"expired"` {
			t.Fatalf("output %s, want expired", out)
		}
	})
}

func TestStuckInstanceSaysWhatItWaitsFor(t *testing.T) {
	reg := runtime.NewRegistry()
	runtime.RegisterOrchestration(reg, "Forever", func(ctx *runtime.OrchestrationContext, _ string) (string, error) {
		return runtime.Await[string](ctx.WaitForEvent("never"))
	})
	env := runtimetest.New(t, reg)
	err := env.Start("Forever", "").Run()
	if err == nil || !strings.Contains(err.Error(), `waits for event "never"`) {
		t.Fatalf("err = %v, want one naming the event it waits for", err)
	}
}

func TestSubOrchestrationsAndContinueAsNew(t *testing.T) {
	reg := runtime.NewRegistry()
	runtime.RegisterOrchestration(reg, "Count", func(ctx *runtime.OrchestrationContext, n int) (int, error) {
		if n < 3 {
			if err := ctx.CreateTimer(time.Minute).Await(nil); err != nil {
				return 0, err
			}
			return 0, ctx.ContinueAsNew(n + 1)
		}
		return n, nil
	})
	runtime.RegisterOrchestration(reg, "Parent", func(ctx *runtime.OrchestrationContext, _ string) (int, error) {
		a := ctx.CallSubOrchestration("Count", 0)
		b := ctx.CallSubOrchestration("Count", 1)
		x, err := runtime.Await[int](a)
		if err != nil {
			return 0, err
		}
		y, err := runtime.Await[int](b)
		return x + y, err
	})
	env := runtimetest.New(t, reg)
	inst := env.Start("Parent", "")
	if err := inst.Run(); err != nil {
		t.Fatal(err)
	}
	if st := inst.Status(); st.Output != "6" {
		t.Fatalf("output %s failure %+v", st.Output, st.Failure)
	}
	if env.Elapsed() != 3*time.Minute {
		t.Fatalf("virtual time %v, want 3m (the children ran side by side)", env.Elapsed())
	}
}

func TestNondeterministicCodeFailsTheRun(t *testing.T) {
	reg := runtime.NewRegistry()
	runs := 0
	runtime.RegisterActivity(reg, "A", func(context.Context, string) (string, error) { return "a", nil })
	runtime.RegisterActivity(reg, "B", func(context.Context, string) (string, error) { return "b", nil })
	runtime.RegisterOrchestration(reg, "Flaky", func(ctx *runtime.OrchestrationContext, _ string) (string, error) {
		runs++
		name := "A"
		if runs > 1 {
			name = "B" // depends on state outside the history
		}
		if _, err := runtime.Await[string](ctx.CallActivity(name, "")); err != nil {
			return "", err
		}
		return runtime.Await[string](ctx.CallActivity("A", ""))
	})
	env := runtimetest.New(t, reg)
	err := env.Start("Flaky", "").Run()
	var nd *runtime.NondeterminismError
	if !errors.As(err, &nd) {
		t.Fatalf("err = %v, want a NondeterminismError", err)
	}
}

func TestTerminate(t *testing.T) {
	env := runtimetest.New(t, approvalRegistry())
	inst := env.Start("Approval", "")
	env.After(time.Hour, func() { inst.Terminate("changed my mind") })
	if err := inst.Run(); err != nil {
		t.Fatal(err)
	}
	if st := inst.Status(); st.Status != runtime.StatusTerminated || st.Failure.Reason != "changed my mind" {
		t.Fatalf("status %s failure %+v", st.Status, st.Failure)
	}
}

// WithLocal activities run inside their turn here too, overrides and call
// counts included: the history shows schedule and result in one turn.
func TestLocalActivities(t *testing.T) {
	reg := runtime.NewRegistry()
	runtime.RegisterOrchestration(reg, "Greet", func(ctx *runtime.OrchestrationContext, name string) (string, error) {
		return runtime.Await[string](ctx.CallActivity("Hello", name, runtime.WithLocal()))
	})
	runtime.RegisterActivity(reg, "Hello", func(_ context.Context, name string) (string, error) { return "hello " + name, nil })
	env := runtimetest.New(t, reg)
	runtimetest.OverrideActivity(env, "Hello", func(_ context.Context, name string) (string, error) { return "hi " + name, nil })
	inst := env.Start("Greet", "ada")
	steps := 0
	for {
		progressed, err := env.Step()
		if err != nil {
			t.Fatal(err)
		}
		if !progressed {
			break
		}
		steps++
	}
	if steps != 1 {
		t.Fatalf("took %d steps, want 1: the turn runs its local activity", steps)
	}
	var out string
	if err := inst.Status().DecodeOutput(&out); err != nil || out != "hi ada" {
		t.Fatalf("output %q (%v), want the override's answer", out, err)
	}
	if got := env.ActivityCalls("Hello"); got != 1 {
		t.Fatalf("Hello ran %d times, want 1", got)
	}
	var kinds []string
	for _, e := range inst.History() {
		kinds = append(kinds, string(e.Kind))
	}
	if got := strings.Join(kinds, ","); got != "OrchestrationStarted,ActivityScheduled,ActivityCompleted,OrchestrationCompleted" {
		t.Fatalf("history %s", got)
	}
}

package checkout_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"example.com/checkout"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/runtime/runtimetest"
)

func registry() *runtime.Registry {
	reg := runtime.NewRegistry()
	checkout.Register(reg)
	return reg
}

// An hour of timer and minutes of backoff run in virtual time: the test
// takes milliseconds.
func TestCheckoutChargesAfterRetries(t *testing.T) {
	began := time.Now()
	env := runtimetest.New(t, registry())
	calls := 0
	runtimetest.OverrideActivity(env, "Charge", func(_ context.Context, o checkout.Order) (string, error) {
		if calls++; calls < 3 {
			return "", errors.New("card declined")
		}
		return "receipt-" + o.ID, nil
	})
	inst := env.Start("Checkout", checkout.Order{ID: "A7", Amount: 30})
	if err := inst.Run(); err != nil {
		t.Fatal(err)
	}
	var out string
	if err := inst.Status().DecodeOutput(&out); err != nil || out != "shipped (receipt-A7)" {
		t.Fatalf("output %q (%v), failure %+v", out, err, inst.Status().Failure)
	}
	if calls != 3 {
		t.Fatalf("Charge ran %d times, want 3", calls)
	}
	if got, want := env.Elapsed(), time.Hour+2*time.Minute+4*time.Minute; got != want {
		t.Fatalf("virtual time %v, want %v", got, want)
	}
	if wall := time.Since(began); wall > time.Second {
		t.Fatalf("took %v of wall time, want under 1s", wall)
	}
}

// Stop where the custom status says, look, and go on.
func TestCheckoutStages(t *testing.T) {
	env := runtimetest.New(t, registry())
	runtimetest.OverrideActivity(env, "Charge", func(context.Context, checkout.Order) (string, error) { return "r", nil })
	inst := env.Start("Checkout", checkout.Order{ID: "B1"})
	stage := func() string {
		var s string
		_, _ = inst.Status().DecodeCustomStatus(&s)
		return s
	}
	if err := inst.RunUntil(func() bool { return stage() == "charging" }); err != nil {
		t.Fatal(err)
	}
	if env.Elapsed() != time.Hour {
		t.Fatalf("charging began after %v, want 1h", env.Elapsed())
	}
	if err := inst.Run(); err != nil {
		t.Fatal(err)
	}
	if inst.Status().Status != runtime.StatusCompleted || stage() != "shipping" {
		t.Fatalf("status %s stage %q", inst.Status().Status, stage())
	}
}

// With the real Charge, every attempt fails and so does the checkout.
func TestCheckoutFailsWhenPaymentNeverWorks(t *testing.T) {
	env := runtimetest.New(t, registry())
	inst := env.Start("Checkout", checkout.Order{ID: "C3"})
	if err := inst.Run(); err != nil {
		t.Fatal(err)
	}
	if st := inst.Status(); st.Status != runtime.StatusFailed || env.ActivityCalls("Charge") != 5 {
		t.Fatalf("status %s after %d charges, failure %+v", st.Status, env.ActivityCalls("Charge"), st.Failure)
	}
}

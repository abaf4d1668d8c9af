package runtimetest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/runtime/runtimetest"
)

// fatalRecorder stands in for a test so a test can read the kit's failure.
// Fatalf stops the caller, as testing.T's does, by panicking a sentinel.
type fatalRecorder struct {
	testing.TB
	msg string
}

type fatalStop struct{}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	panic(fatalStop{})
}

// fatalOf runs fn against a recorder and returns what it failed with, or ""
// when it did not fail.
func fatalOf(fn func(t testing.TB)) string {
	rec := &fatalRecorder{}
	func() {
		defer func() {
			if p := recover(); p != nil && p != (fatalStop{}) {
				panic(p)
			}
		}()
		fn(rec)
	}()
	return rec.msg
}

const chargeSignature = "func(context.Context, runtimetest_test.order) (string, error)"

func TestOverrideActivityChecksNameAndTypes(t *testing.T) {
	t.Run("misspelled name fails with the registered names", func(t *testing.T) {
		msg := fatalOf(func(tb testing.TB) {
			env := runtimetest.New(tb, checkoutRegistry())
			runtimetest.OverrideActivity(env, "Chrage", func(context.Context, order) (string, error) { return "r", nil })
		})
		want := `runtimetest: override activity "Chrage": not registered; registered activities: Charge, Ship`
		if msg != want {
			t.Fatalf("failure %q, want %q", msg, want)
		}
	})
	t.Run("empty registry says so", func(t *testing.T) {
		msg := fatalOf(func(tb testing.TB) {
			env := runtimetest.New(tb, runtime.NewRegistry())
			runtimetest.OverrideActivity(env, "Charge", func(context.Context, order) (string, error) { return "r", nil })
		})
		want := `runtimetest: override activity "Charge": not registered; registered activities: none`
		if msg != want {
			t.Fatalf("failure %q, want %q", msg, want)
		}
	})
	t.Run("wrong input type fails with both signatures", func(t *testing.T) {
		msg := fatalOf(func(tb testing.TB) {
			env := runtimetest.New(tb, checkoutRegistry())
			runtimetest.OverrideActivity(env, "Charge", func(context.Context, int) (string, error) { return "r", nil })
		})
		want := `runtimetest: override activity "Charge": func(context.Context, int) (string, error) ` +
			`does not match the registered ` + chargeSignature
		if msg != want {
			t.Fatalf("failure %q, want %q", msg, want)
		}
	})
	t.Run("wrong output type fails with both signatures", func(t *testing.T) {
		msg := fatalOf(func(tb testing.TB) {
			env := runtimetest.New(tb, checkoutRegistry())
			runtimetest.OverrideActivity(env, "Charge", func(context.Context, order) (int, error) { return 1, nil })
		})
		want := `runtimetest: override activity "Charge": func(context.Context, runtimetest_test.order) (int, error) ` +
			`does not match the registered ` + chargeSignature
		if msg != want {
			t.Fatalf("failure %q, want %q", msg, want)
		}
	})
	t.Run("matching override is used", func(t *testing.T) {
		var out string
		msg := fatalOf(func(tb testing.TB) {
			env := runtimetest.New(tb, checkoutRegistry())
			runtimetest.OverrideActivity(env, "Charge", func(context.Context, order) (string, error) { return "receipt-1", nil })
			inst := env.Start("Checkout", order{ID: 1})
			if err := inst.Run(); err != nil {
				tb.Fatalf("run: %v", err)
			}
			if err := inst.Status().DecodeOutput(&out); err != nil {
				tb.Fatalf("output: %v", err)
			}
		})
		if msg != "" || out != "shipped against receipt-1" {
			t.Fatalf("failure %q, output %q, want the override's receipt shipped", msg, out)
		}
	})
	t.Run("untyped activity takes an override of any types", func(t *testing.T) {
		reg := runtime.NewRegistry()
		if err := reg.AddActivity("Raw", func(_ context.Context, in string) (string, error) { return in, nil }); err != nil {
			t.Fatal(err)
		}
		msg := fatalOf(func(tb testing.TB) {
			env := runtimetest.New(tb, reg)
			runtimetest.OverrideActivity(env, "Raw", func(context.Context, order) (int, error) { return 1, nil })
		})
		if msg != "" {
			t.Fatalf("failure %q, want none: an untyped activity has no types to match", msg)
		}
	})
	t.Run("without a test it panics with the same message", func(t *testing.T) {
		defer func() {
			want := `runtimetest: override activity "Chrage": not registered; registered activities: Charge, Ship`
			if p := recover(); p != want {
				t.Fatalf("panic %v, want %q", p, want)
			}
		}()
		env := runtimetest.New(nil, checkoutRegistry())
		runtimetest.OverrideActivity(env, "Chrage", func(context.Context, order) (string, error) { return "r", nil })
	})
}

package runtimetest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/runtime/runtimetest"
)

// A day-long wait and a retried activity run in virtual time; one activity
// is replaced for the test.
func Example() {
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Remind", func(_ context.Context, who string) (string, error) {
		return "", errors.New("mail server unreachable in tests")
	})
	runtime.RegisterOrchestration(reg, "Reminder", func(ctx *runtime.OrchestrationContext, who string) (string, error) {
		if err := ctx.CreateTimer(24 * time.Hour).Await(nil); err != nil {
			return "", err
		}
		retry := runtime.RetryPolicy{MaxAttempts: 3, InitialInterval: time.Minute}
		return runtime.Await[string](ctx.CallActivity("Remind", who, runtime.WithRetry(retry)))
	})

	env := runtimetest.New(nil, reg) // in a test: runtimetest.New(t, reg)
	failures := 1
	runtimetest.OverrideActivity(env, "Remind", func(_ context.Context, who string) (string, error) {
		if failures > 0 {
			failures--
			return "", errors.New("try again")
		}
		return "reminded " + who, nil
	})
	inst := env.Start("Reminder", "ada")
	if err := inst.Run(); err != nil {
		fmt.Println(err)
		return
	}
	var out string
	_ = inst.Status().DecodeOutput(&out)
	fmt.Println(out, "after", env.Elapsed())
	// Output: reminded ada after 24h1m0s
}

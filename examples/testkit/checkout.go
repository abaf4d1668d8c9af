// Package checkout is an example of a user's module: an orchestration with
// an hour-long cooling-off timer and a payment retried minutes apart, unit
// tested with runtime/runtimetest in checkout_test.go.
package checkout

import (
	"context"
	"errors"
	"time"

	"github.com/duroxide/duroxide-go/runtime"
)

// Order is what a customer bought.
type Order struct {
	ID     string
	Amount int
}

// Register adds the orchestration and its activities to reg.
func Register(reg *runtime.Registry) {
	runtime.RegisterOrchestration(reg, "Checkout", Checkout)
	runtime.RegisterActivity(reg, "Charge", charge)
	runtime.RegisterActivity(reg, "Ship", ship)
}

// Checkout waits out an hour of cooling off, charges the card (retried up to
// five times, two minutes apart and doubling), then ships.
func Checkout(ctx *runtime.OrchestrationContext, o Order) (string, error) {
	ctx.SetCustomStatus("cooling off")
	if err := ctx.CreateTimer(time.Hour).Await(nil); err != nil {
		return "", err
	}
	ctx.SetCustomStatus("charging")
	retry := runtime.RetryPolicy{MaxAttempts: 5, InitialInterval: 2 * time.Minute, Multiplier: 2}
	receipt, err := runtime.Await[string](ctx.CallActivity("Charge", o, runtime.WithRetry(retry)))
	if err != nil {
		return "", err
	}
	ctx.SetCustomStatus("shipping")
	return runtime.Await[string](ctx.CallActivity("Ship", receipt))
}

// charge would call the payment provider.
func charge(context.Context, Order) (string, error) {
	return "", errors.New("payment provider not configured")
}

func ship(_ context.Context, receipt string) (string, error) {
	return "shipped (" + receipt + ")", nil
}

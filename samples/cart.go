package samples

import (
	"fmt"

	"github.com/duroxide/duroxide-go/runtime"
)

// CartEvent is what a shopper sends as the "cart" event: an item to add,
// or the checkout.
type CartEvent struct {
	Add      string `json:"add,omitempty"`
	Price    int    `json:"price,omitempty"`
	Checkout bool   `json:"checkout,omitempty"`
}

// CartSummary is the cart at checkout.
type CartSummary struct {
	Items []string `json:"items"`
	Total int      `json:"total"`
}

// cartItemsPerExecution is how many items an execution of Cart takes before
// it continues as new, keeping each history short.
const cartItemsPerExecution = 2

// Cart keeps a shopping cart in the instance's durable values ("items"
// and "total"): clients read them at any time (Client.Value, duroxide kv)
// while it waits for "cart" events, and they survive the continue-as-new
// it does every few items. Checkout returns the cart.
func Cart(ctx *runtime.OrchestrationContext, _ struct{}) (CartSummary, error) {
	for range cartItemsPerExecution {
		ev, err := runtime.Await[CartEvent](ctx.WaitForEvent("cart"))
		if err != nil {
			return CartSummary{}, err
		}
		var cart CartSummary
		if _, err := ctx.Value("items", &cart.Items); err != nil {
			return CartSummary{}, err
		}
		if _, err := ctx.Value("total", &cart.Total); err != nil {
			return CartSummary{}, err
		}
		if ev.Checkout {
			ctx.ClearValues()
			return cart, nil
		}
		if err := addToCart(ctx, cart, ev); err != nil {
			return CartSummary{}, err
		}
	}
	return CartSummary{}, ctx.ContinueAsNew(struct{}{})
}

func addToCart(ctx *runtime.OrchestrationContext, cart CartSummary, ev CartEvent) error {
	if err := ctx.SetValue("items", append(cart.Items, ev.Add)); err != nil {
		return fmt.Errorf("add %s: %w", ev.Add, err)
	}
	return ctx.SetValue("total", cart.Total+ev.Price)
}

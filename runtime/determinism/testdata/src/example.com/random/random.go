// Package random tests rule 3: random numbers.
package random

import (
	"context"
	crand "crypto/rand"
	"math/rand"
	randv2 "math/rand/v2"

	"github.com/duroxide/duroxide-go/runtime"
)

// Dice draws random numbers in orchestration code.
func Dice(ctx *runtime.OrchestrationContext, n int) (int, error) { // want Dice:"calls math/rand.Intn"
	a := rand.Intn(n) // want `^math/rand\.Intn in orchestration Dice: use ctx\.NewGUID\(\) or draw the value in an activity$`
	b := randv2.N(n)  // want `^math/rand/v2\.N in orchestration Dice: use ctx\.NewGUID\(\)`
	buf := make([]byte, 8)
	crand.Read(buf)                  // want `^crypto/rand\.Read in orchestration Dice`
	r := rand.New(rand.NewSource(1)) // want `math/rand\.New in` `math/rand\.NewSource in`
	return a + b + r.Int(), nil      // want `^\(\*math/rand\.Rand\)\.Int in orchestration Dice`
}

// GUID uses the replayed GUID: no report.
func GUID(ctx *runtime.OrchestrationContext, _ int) (string, error) {
	return ctx.NewGUID(), nil
}

// rollActivity draws the number in an activity: no report.
func rollActivity(_ context.Context, n int) (int, error) { // want rollActivity:"calls math/rand.Intn"
	return rand.Intn(n), nil
}

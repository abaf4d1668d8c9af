// Package suppress tests the //duroxide:nondeterministic-ok comment.
package suppress

import (
	"time"

	"github.com/duroxide/duroxide-go/runtime"
)

// Suppressed silences each report it covers; nothing here is reported, and
// Suppressed carries no fact.
func Suppressed(ctx *runtime.OrchestrationContext, _ int) (string, error) {
	took := time.Since(ctx.Now()) //duroxide:nondeterministic-ok only logged
	//duroxide:nondeterministic-ok the line below is only logged
	started := time.Now()
	//duroxide:nondeterministic-ok a trusted helper
	trusted()
	return took.String() + started.String(), nil
}

// NotCovered shows that a directive covers its own line and the next only.
func NotCovered(ctx *runtime.OrchestrationContext, _ int) (string, error) { // want NotCovered:"calls time.Now"
	//duroxide:nondeterministic-ok
	_ = 1
	return time.Now().String(), nil // want `^time\.Now in orchestration NotCovered`
}

func trusted() { // want trusted:"calls time.Now"
	_ = time.Now()
}

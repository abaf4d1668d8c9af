// Package gostmt tests rule 1: go statements.
package gostmt

import "github.com/duroxide/duroxide-go/runtime"

func work() {}

// GoStatement starts a goroutine the replay engine cannot see.
func GoStatement(ctx *runtime.OrchestrationContext, n int) (int, error) { // want GoStatement:"nondeterministic: uses a go statement \\(gostmt/gostmt.go:10\\)"
	go work() // want `^go statement in orchestration GoStatement: use ctx\.Go, which the replay engine schedules deterministically$`
	return n, nil
}

// CtxGo is the deterministic alternative: no report.
func CtxGo(ctx *runtime.OrchestrationContext, n int) (int, error) {
	f := ctx.Go(func(ctx *runtime.OrchestrationContext) (any, error) {
		work()
		return n, nil
	})
	return n, f.Await(nil)
}

// goOutsideOrchestration is not orchestration code: no report, only a fact.
func goOutsideOrchestration() { // want goOutsideOrchestration:"uses a go statement"
	go work()
}

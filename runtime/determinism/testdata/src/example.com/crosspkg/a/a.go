// Package a calls into package b from orchestration code.
package a

import (
	"example.com/crosspkg/b"

	"github.com/duroxide/duroxide-go/runtime"
)

// UsesB calls nondeterministic functions of another package.
func UsesB(ctx *runtime.OrchestrationContext, n int) (int, error) { // want UsesB:"calls time.Now \\(b/b.go:9\\)"
	_ = b.Stamp()    // want `^call to b\.Stamp in orchestration UsesB is nondeterministic: it calls time\.Now \(b/b\.go:9\); use ctx\.Now\(\), which replays the recorded time$`
	_ = b.Indirect() // want `^call to b\.Indirect in orchestration UsesB is nondeterministic: it calls time\.Now \(b/b\.go:9\)`
	var c b.Clock
	_ = c.Read()       // want `^call to \(\*b\.Clock\)\.Read in orchestration UsesB is nondeterministic: it calls time\.Now`
	b.Spawn(func() {}) // want `^call to b\.Spawn in orchestration UsesB is nondeterministic: it uses a go statement \(b/b\.go:30\); use ctx\.Go`
	return b.Pure(n) + helper(), nil
}

// helper reaches package b from a helper.
func helper() int { // want helper:"calls time.Now \\(b/b.go:9\\)"
	return b.Stamp().Second() // want `^call to b\.Stamp in helper \(called from orchestration UsesB\)`
}

// outside calls b but is not orchestration code: a fact, no report.
func outside() int { // want outside:"calls time.Now"
	return b.Stamp().Second()
}

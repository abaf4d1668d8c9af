// Package roots tests what counts as orchestration code: registered functions
// (literal, named, method value, wrapped), functions taking an
// OrchestrationContext, and the helpers they call.
package roots

import (
	"time"

	"github.com/duroxide/duroxide-go/runtime"
)

// Register registers orchestrations in every supported way. Register itself
// is not orchestration code: it runs once, at startup.
func Register(reg *runtime.Registry) { // want Register:"calls time.Now"
	started := time.Now() // not orchestration code: no report
	_ = started
	runtime.RegisterOrchestration(reg, "Greeter", func(ctx *runtime.OrchestrationContext, name string) (string, error) {
		return name + time.Now().String(), nil // want `^time\.Now in orchestration "Greeter": use ctx\.Now\(\)`
	})
	runtime.RegisterOrchestration(reg, "Named", Named)
	runtime.RegisterOrchestrationVersion(reg, "Named", "2.0.0", NamedV2)
	var svc service
	runtime.RegisterOrchestration(reg, "Method", svc.Run)
	reg.AddOrchestration("Raw", "1.0.0", func(ctx *runtime.OrchestrationContext, in string) (string, error) {
		time.Sleep(time.Second) // want `^time\.Sleep in orchestration "Raw"`
		return in, nil
	})
	reg.AddOrchestration("Wrapped", "1.0.0", adapt(plain))
}

// Named is a registered named function; it reaches nondeterminism through two
// levels of helpers.
func Named(ctx *runtime.OrchestrationContext, in int) (int, error) { // want Named:"calls time.Now \\(roots/roots.go:42\\)"
	return helper(in), nil
}

func helper(in int) int { // want helper:"calls time.Now"
	return deeper(in)
}

func deeper(in int) int { // want deeper:"calls time.Now"
	return in + time.Now().Second() // want `^time\.Now in deeper \(called from orchestration Named\): use ctx\.Now\(\)`
}

// NamedV2 is registered with a version.
func NamedV2(ctx *runtime.OrchestrationContext, in int) (int, error) { // want NamedV2:"uses a go statement"
	go func() {}() // want `^go statement in orchestration NamedV2`
	return in, nil
}

type service struct{}

// Run is registered as a method value.
func (service) Run(ctx *runtime.OrchestrationContext, in string) (string, error) { // want Run:"calls time.Since"
	return time.Since(ctx.Now()).String(), nil // want `^time\.Since in orchestration service\.Run`
}

// adapt turns a plain function into an orchestration. It runs at registration
// time, so it is not orchestration code, but what it wraps is.
func adapt(f func(string) string) runtime.OrchestrationFunc { // want adapt:"calls time.Now"
	_ = time.Now() // registration time: no report
	return func(ctx *runtime.OrchestrationContext, in string) (string, error) {
		return f(in), nil
	}
}

func plain(in string) string { // want plain:"calls time.Now"
	return in + time.Now().String() // want `^time\.Now in orchestration plain`
}

// notCalled is never reached from orchestration code: a fact, no report.
func notCalled() int { // want notCalled:"calls time.Now"
	return time.Now().Second()
}

// Unregistered takes an OrchestrationContext, so it is orchestration code even
// without a registration (a helper, or registered elsewhere).
func Unregistered(ctx *runtime.OrchestrationContext) time.Time { // want Unregistered:"calls time.Now"
	f := ctx.Go(func(ctx *runtime.OrchestrationContext) (any, error) {
		return pick(), nil
	})
	_ = f
	return time.Now() // want `^time\.Now in orchestration Unregistered`
}

func pick() int { // want pick:"ranges over a map"
	for k := range map[int]bool{1: true} { // want `^range over map in pick \(called from orchestration Unregistered\)`
		return k
	}
	return 0
}

// Stored is a func literal that takes an OrchestrationContext.
var Stored = func(ctx *runtime.OrchestrationContext, in int) (int, error) {
	ch := make(chan int)
	ch <- in // want `^channel send in orchestration func literal in Stored`
	return in, nil
}

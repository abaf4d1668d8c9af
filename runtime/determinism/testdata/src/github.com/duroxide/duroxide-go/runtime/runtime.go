// Package runtime is a stub of the duroxide runtime API, just enough for the
// determinism analyzer's tests to type-check. Like the real package, it names
// the engine's types with aliases and wraps its generic functions. The
// analyzer matches both by import path and type name.
package runtime

import "github.com/duroxide/duroxide-go/runtime/internal/engine"

// OrchestrationContext is the deterministic API of orchestration code.
type OrchestrationContext = engine.OrchestrationContext

// Future is the result of a durable operation.
type Future = engine.Future

// OrchestrationFunc is the untyped form of an orchestration.
type OrchestrationFunc = engine.OrchestrationFunc

// Registry maps names to orchestrations.
type Registry = engine.Registry

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return engine.NewRegistry() }

// Await waits for f and returns its typed result.
func Await[T any](f *Future) (T, error) { return engine.Await[T](f) }

// RegisterOrchestration registers a typed orchestration.
func RegisterOrchestration[In, Out any](r *Registry, name string, fn func(ctx *OrchestrationContext, input In) (Out, error)) {
	engine.RegisterOrchestration(r, name, fn)
}

// RegisterOrchestrationVersion registers a typed orchestration at version.
func RegisterOrchestrationVersion[In, Out any](r *Registry, name, version string, fn func(ctx *OrchestrationContext, input In) (Out, error)) {
	engine.RegisterOrchestrationVersion(r, name, version, fn)
}

// Package engine is a stub of the duroxide replay engine, which declares the
// orchestration API that package runtime names with aliases, as the real
// engine does. The analyzer trusts it as it trusts runtime.
package engine

import "time"

// OrchestrationContext is the deterministic API of orchestration code.
type OrchestrationContext struct{ now time.Time }

// Future is the result of a durable operation.
type Future struct{}

// Await waits for the future and decodes its result into out.
func (f *Future) Await(out any) error { return nil }

// Await waits for f and returns its typed result.
func Await[T any](f *Future) (T, error) {
	var zero T
	return zero, nil
}

// Now returns the replayed current time.
func (c *OrchestrationContext) Now() time.Time { return c.now }

// NewGUID returns a replayed GUID.
func (c *OrchestrationContext) NewGUID() string { return "guid" }

// CreateTimer starts a durable timer.
func (c *OrchestrationContext) CreateTimer(d time.Duration) *Future { return &Future{} }

// CallActivity schedules an activity.
func (c *OrchestrationContext) CallActivity(name string, input any) *Future { return &Future{} }

// Go starts a deterministic goroutine. Like the real runtime, it is built on
// a goroutine and channels; the analyzer trusts this package, so neither this
// nor its callers are reported.
func (c *OrchestrationContext) Go(fn func(ctx *OrchestrationContext) (any, error)) *Future {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(c)
	}()
	<-done
	return &Future{}
}

// Select waits for the first of futures and returns its index.
func (c *OrchestrationContext) Select(futures ...*Future) int { return 0 }

// WhenAll waits for all futures.
func (c *OrchestrationContext) WhenAll(futures ...*Future) error { return nil }

// OrchestrationFunc is the untyped form of an orchestration.
type OrchestrationFunc func(ctx *OrchestrationContext, input string) (string, error)

// Registry maps names to orchestrations.
type Registry struct{}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// AddOrchestration registers fn as version of the named orchestration.
func (r *Registry) AddOrchestration(name, version string, fn OrchestrationFunc) error { return nil }

// RegisterOrchestration registers a typed orchestration.
func RegisterOrchestration[In, Out any](r *Registry, name string, fn func(ctx *OrchestrationContext, input In) (Out, error)) {
}

// RegisterOrchestrationVersion registers a typed orchestration at version.
func RegisterOrchestrationVersion[In, Out any](r *Registry, name, version string, fn func(ctx *OrchestrationContext, input In) (Out, error)) {
}

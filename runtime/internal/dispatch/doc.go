// Package dispatch runs a process's dispatchers on a store: the
// orchestration and activity fetch loops and their slots, lock and lease
// renewal, the one commit path and its fast paths (shortcuts.go: leases,
// next turns, cached turns, quiet results, eager and direct starts), the
// worker announcement and outage logging; the interceptor chain around
// turns, activity attempts and client calls, and the runtime's metrics
// (metrics.go). Each turn is computed by the engine.
//
// It may import provider, runtime/internal/engine, the OpenTelemetry metric
// API and the standard library; never runtime (its public face), a store,
// or an OpenTelemetry SDK.
package dispatch

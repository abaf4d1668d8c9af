// Package telemetry traces duroxide orchestrations with OpenTelemetry.
//
// Tracing returns a runtime.Interceptor; give it to the runtime and to the
// clients that start instances:
//
//	tracing := telemetry.Tracing() // the global TracerProvider, W3C trace context
//	rt := runtime.New(store, reg, runtime.Options{Interceptors: []runtime.Interceptor{tracing}})
//	client := runtime.NewClient(store, runtime.ClientInterceptors(tracing))
//
// One instance is one trace, whatever process runs each part of it:
//
//	start hello                  Client.Start (its caller's span, if any, is the parent)
//	├── turn hello               each turn, as it runs and commits
//	│   └── activity greet       each attempt a worker runs
//	├── turn hello
//	│   └── turn child           a sub-orchestration's turns, and its activities
//	└── ...
//
// The trace context travels in headers recorded in history: Client.Start
// records its span's context with the instance's start, and each turn
// records its own span's context with the activities and children it
// schedules. A worker in another process, or one that replays the history
// after a crash, reads the same context back, so its spans join the same
// trace. Replay adds no spans: a turn's span covers the live turn only
// (span attribute duroxide.replayed says how many events it replayed
// first), decisions replayed from history are not scheduled again, and
// an activity's span is opened only when a worker runs an attempt. An
// instance started without trace context (by a client without the
// interceptor, or kubectl through an operator that exports no spans) gets a trace ID derived
// from its instance ID, so its turns still form one trace.
//
// Sampling is the TracerProvider's: with a parent-based sampler an
// instance's spans are kept or dropped together. An instance without trace
// context has no root to sample, so its derived parent carries the
// decision: the ratio of OTEL_TRACES_SAMPLER by default (as the SDK reads
// it), WithDerivedSampling otherwise. A span the sampler drops
// costs little (no attributes are built for it); a span's attributes are
// set as it ends, so a sampler sees its name and kind, not its attributes.
//
// The runtime's metrics need no interceptor: runtime.Options.MeterProvider
// (default: the global MeterProvider). Store-wide gauges (instance counts,
// queue depths, backlog by name) come from one process per store: the
// operator for its WorkerPools, ObserveStore elsewhere.
// docs/observability.md lists every metric and span.
package telemetry

package main

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/telemetry"
)

// instrumentation turns on what a production worker runs with. "metrics":
// the OTel SDK's meter provider as the global one (the runtime and the
// stores record into it; a reader collects it as a scrape would).
// "traces": that, and the tracing interceptor on an SDK tracer provider
// that samples every span and batches it to an exporter that drops it;
// "traces10": the same sampling one instance in ten (parent-based, so an
// instance's spans are kept or dropped together). It returns the
// interceptors to run with and a function that stops it all.
func instrumentation(level string) (interceptors []runtime.Interceptor, stop func(), err error) {
	sampler := map[string]sdktrace.Sampler{"metrics": nil, "traces": sdktrace.AlwaysSample(),
		"traces10": sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.1))}
	s, ok := sampler[level]
	if !ok {
		return nil, nil, fmt.Errorf("-telemetry %q: want metrics, traces or traces10", level)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	otel.SetMeterProvider(mp)
	stopMetrics := func() { _ = mp.Shutdown(context.Background()) }
	if s == nil {
		return nil, stopMetrics, nil
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(s), sdktrace.WithBatcher(discard{}))
	return []runtime.Interceptor{telemetry.Tracing(telemetry.WithTracerProvider(tp))}, func() {
		_ = tp.Shutdown(context.Background())
		stopMetrics()
	}, nil
}

// discard is a span exporter that drops what it is given.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

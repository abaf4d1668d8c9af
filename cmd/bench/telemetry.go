package main

import (
	"context"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/telemetry"
)

// instrumentation turns on what a production worker runs with: the OTel
// SDK's meter provider as the global one (the runtime and the stores
// record into it; a reader collects it as a scrape would) and the tracing
// interceptor on an SDK tracer provider that samples every span and
// batches it to an exporter that drops it. It returns the interceptors to
// run with and a function that stops it all.
func instrumentation() (interceptors []runtime.Interceptor, stop func()) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	otel.SetMeterProvider(mp)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(discard{}))
	return []runtime.Interceptor{telemetry.Tracing(telemetry.WithTracerProvider(tp))}, func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	}
}

// discard is a span exporter that drops what it is given.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

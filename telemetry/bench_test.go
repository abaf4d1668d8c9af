package telemetry_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/telemetry"
)

// BenchmarkInstrumentation runs one instance at a time of a three-step
// chain on SQLite, start to completion: without instrumentation, with the
// runtime's and the store's metrics recorded by the OpenTelemetry SDK, and
// with every span traced too (batched to an exporter that drops them), and
// with one instance in ten traced. Compare the sub-benchmarks with benchstat.
func BenchmarkInstrumentation(b *testing.B) {
	samplers := map[string]sdktrace.Sampler{"traces": sdktrace.AlwaysSample(),
		"traces10": sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.1))}
	for _, level := range []string{"none", "metrics", "traces", "traces10"} {
		b.Run(level, func(b *testing.B) {
			var mp metric.MeterProvider = noop.NewMeterProvider()
			var interceptors []runtime.Interceptor
			if level != "none" {
				sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
				defer func() { _ = sdk.Shutdown(context.Background()) }()
				mp = sdk
			}
			if sampler := samplers[level]; sampler != nil {
				tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithBatcher(dropSpans{}))
				defer func() { _ = tp.Shutdown(context.Background()) }()
				interceptors = []runtime.Interceptor{telemetry.Tracing(telemetry.WithTracerProvider(tp))}
			}
			runChains(b, mp, interceptors)
		})
	}
}

func runChains(b *testing.B, mp metric.MeterProvider, interceptors []runtime.Interceptor) {
	store, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Step", func(_ context.Context, s string) (string, error) { return s + ".", nil })
	runtime.RegisterOrchestration(reg, "Chain", func(ctx *runtime.OrchestrationContext, s string) (string, error) {
		for range 3 {
			var err error
			if s, err = runtime.Await[string](ctx.CallActivity("Step", s)); err != nil {
				return "", err
			}
		}
		return s, nil
	})
	rt := runtime.New(store, reg, runtime.Options{Logger: quiet, MeterProvider: mp, Interceptors: interceptors})
	if err := rt.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = rt.Shutdown(context.Background()) }()
	c := rt.Client()
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
	defer cancel()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	defer func() { b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op") }()
	for i := range b.N {
		id := fmt.Sprintf("chain-%d", i)
		if err := c.Start(ctx, id, "Chain", "x"); err != nil {
			b.Fatal(err)
		}
		if st, err := c.Wait(ctx, id); err != nil || st.Status != runtime.StatusCompleted {
			b.Fatalf("%s: %+v %v", id, st, err)
		}
	}
}

// dropSpans is a span exporter that drops what it is given.
type dropSpans struct{}

func (dropSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (dropSpans) Shutdown(context.Context) error                             { return nil }

package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/telemetry"
)

// workerTelemetry is what a worker reports through: the runtime's and the
// store's metrics on the worker's Prometheus registry and the readers
// Exporters adds, and spans when Exporters gives a span exporter.
type workerTelemetry struct {
	meters       *sdkmetric.MeterProvider
	tracer       *sdktrace.TracerProvider // nil: tracing off
	interceptors []runtime.Interceptor
}

// newTelemetry builds the worker's meter provider on reg, with what
// w.Exporters adds.
func (w *Worker) newTelemetry(ctx context.Context, reg prometheus.Registerer) (*workerTelemetry, error) {
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", "duroxide-worker"),
			attribute.String("service.instance.id", w.cfg.WorkerID), attribute.String("duroxide.pool", w.cfg.Pool)))
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	prom, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutTargetInfo(), otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	opts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(prom)}
	var spans sdktrace.SpanExporter
	if w.Exporters != nil {
		readers, exporter, err := w.Exporters(ctx)
		if err != nil {
			return nil, fmt.Errorf("telemetry exporters: %w", err)
		}
		for _, r := range readers {
			opts = append(opts, sdkmetric.WithReader(r))
		}
		spans = exporter
	}
	t := &workerTelemetry{meters: sdkmetric.NewMeterProvider(opts...)}
	if spans != nil {
		t.tracer = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(spans))
		t.interceptors = append(t.interceptors, telemetry.Tracing(telemetry.WithTracerProvider(t.tracer)))
	}
	return t, nil
}

// shutdown flushes what the exporters hold.
func (t *workerTelemetry) shutdown(ctx context.Context) error {
	err := t.meters.Shutdown(ctx)
	if t.tracer != nil {
		err = errors.Join(err, t.tracer.Shutdown(ctx))
	}
	return err
}

package worker

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/telemetry"
)

// The OpenTelemetry variables that turn on OTLP export; the exporters read
// the rest of the standard OTEL_EXPORTER_OTLP_* settings themselves.
const (
	envOTLPEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envOTLPTracesEndpoint  = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envOTLPMetricsEndpoint = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
)

// telemetry is what a worker reports through: the runtime's metrics on
// the worker's Prometheus registry (and OTLP when configured), and spans
// through OTLP when configured.
type workerTelemetry struct {
	meters       *sdkmetric.MeterProvider
	tracer       *sdktrace.TracerProvider // nil: tracing off
	interceptors []runtime.Interceptor
}

// newTelemetry builds the worker's meter provider on reg and, when the
// environment names an OTLP endpoint, its OTLP exporters.
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
	readers := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(prom)}
	if otlpFor(envOTLPMetricsEndpoint) {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTLP metrics exporter: %w", err)
		}
		readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	t := &workerTelemetry{meters: sdkmetric.NewMeterProvider(readers...)}
	if otlpFor(envOTLPTracesEndpoint) {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTLP trace exporter: %w", err)
		}
		t.tracer = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(exp))
		t.interceptors = append(t.interceptors, telemetry.Tracing(telemetry.WithTracerProvider(t.tracer)))
	}
	return t, nil
}

// otlpFor reports whether OTLP export is configured for a signal: its own
// endpoint variable or the common one is set.
func otlpFor(signalEnv string) bool {
	return os.Getenv(envOTLPEndpoint) != "" || os.Getenv(signalEnv) != ""
}

// shutdown flushes what the exporters hold.
func (t *workerTelemetry) shutdown(ctx context.Context) error {
	err := t.meters.Shutdown(ctx)
	if t.tracer != nil {
		err = errors.Join(err, t.tracer.Shutdown(ctx))
	}
	return err
}

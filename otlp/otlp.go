// Package otlp exports a worker's metrics and spans over OTLP/HTTP when the
// standard OpenTelemetry variables ask for it:
//
//	w := worker.New(reg, cfg, logger)
//	w.Exporters = otlp.FromEnv
//
// OTEL_EXPORTER_OTLP_ENDPOINT turns on both; OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// and OTEL_EXPORTER_OTLP_METRICS_ENDPOINT each one. The exporters read the
// other OTEL_EXPORTER_OTLP_* variables (headers, timeout, compression)
// themselves.
//
// It is a module of its own: the OTLP exporters bring gRPC into a module
// graph, and the library (runtime, the stores, worker) keeps it out of its
// users' graphs unless they import this.
package otlp

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The variables that turn export on.
const (
	EnvEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint  = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvMetricsEndpoint = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
)

// FromEnv returns a periodic OTLP metric reader and an OTLP span exporter,
// each when the environment names an endpoint for it (nil otherwise): the
// signature of worker.Worker.Exporters.
func FromEnv(ctx context.Context) (metrics []sdkmetric.Reader, spans sdktrace.SpanExporter, err error) {
	return FromEnvWith()(ctx)
}

// FromEnvWith is FromEnv whose metric reader also exports what producers
// give: metrics kept outside OpenTelemetry, such as a Prometheus registry's
// through go.opentelemetry.io/contrib/bridges/prometheus (the operator's).
func FromEnvWith(producers ...sdkmetric.Producer) func(context.Context) ([]sdkmetric.Reader, sdktrace.SpanExporter, error) {
	return func(ctx context.Context) (metrics []sdkmetric.Reader, spans sdktrace.SpanExporter, err error) {
		return fromEnv(ctx, producers)
	}
}

func fromEnv(ctx context.Context, producers []sdkmetric.Producer) (metrics []sdkmetric.Reader, spans sdktrace.SpanExporter, err error) {
	if configured(EnvMetricsEndpoint) {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("OTLP metrics exporter: %w", err)
		}
		var opts []sdkmetric.PeriodicReaderOption
		for _, p := range producers {
			opts = append(opts, sdkmetric.WithProducer(p))
		}
		metrics = append(metrics, sdkmetric.NewPeriodicReader(exp, opts...))
	}
	if configured(EnvTracesEndpoint) {
		if spans, err = otlptracehttp.New(ctx); err != nil {
			return nil, nil, fmt.Errorf("OTLP trace exporter: %w", err)
		}
	}
	return metrics, spans, nil
}

// configured reports whether a signal's endpoint, or the common one, is set.
func configured(signalEnv string) bool {
	return os.Getenv(EnvEndpoint) != "" || os.Getenv(signalEnv) != ""
}

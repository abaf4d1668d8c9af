package main

import (
	"context"
	"errors"
	"fmt"

	prombridge "go.opentelemetry.io/contrib/bridges/prometheus"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/duroxide/duroxide-go/otlp"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/telemetry"
)

// otlpExport is what the manager sends over OTLP when the standard
// OpenTelemetry variables ask for it (package otlp):
//   - metrics: everything its Prometheus endpoint serves (controller-
//     runtime's and the operator's), read through the Prometheus bridge;
//   - spans: the client calls it makes to the pools' stores (a start from
//     kubectl apply, events, terminations), whose trace context the started
//     instance's turns and activities carry on.
type otlpExport struct {
	meters *sdkmetric.MeterProvider // nil: metrics not exported
	tracer *sdktrace.TracerProvider // nil: spans not exported
}

// newOTLPExport builds the exporters the environment configures; none when
// it names no endpoint.
func newOTLPExport(ctx context.Context) (*otlpExport, error) {
	readers, spans, err := otlp.FromEnvWith(prombridge.NewMetricProducer(prombridge.WithGatherer(ctrlmetrics.Registry)))(ctx)
	if err != nil {
		return nil, err
	}
	e := &otlpExport{}
	if len(readers) == 0 && spans == nil {
		return e, nil
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", "duroxide-operator")))
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	if len(readers) > 0 {
		opts := []sdkmetric.Option{sdkmetric.WithResource(res)}
		for _, r := range readers {
			opts = append(opts, sdkmetric.WithReader(r))
		}
		e.meters = sdkmetric.NewMeterProvider(opts...)
	}
	if spans != nil {
		e.tracer = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(spans))
	}
	return e, nil
}

// interceptors trace the operator's client calls when spans are exported.
func (e *otlpExport) interceptors() []runtime.Interceptor {
	if e.tracer == nil {
		return nil
	}
	return []runtime.Interceptor{telemetry.Tracing(telemetry.WithTracerProvider(e.tracer))}
}

// shutdown flushes what the exporters hold.
func (e *otlpExport) shutdown(ctx context.Context) error {
	var err error
	if e.meters != nil {
		err = e.meters.Shutdown(ctx)
	}
	if e.tracer != nil {
		err = errors.Join(err, e.tracer.Shutdown(ctx))
	}
	return err
}

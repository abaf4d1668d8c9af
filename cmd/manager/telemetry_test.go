package main

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/duroxide/duroxide-go/otlp/otlptest"
	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
)

// Without an OTLP endpoint in the environment the manager exports nothing
// and traces nothing.
func TestOTLPExportOffByDefault(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	e, err := newOTLPExport(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if e.meters != nil || e.tracer != nil || len(e.interceptors()) != 0 {
		t.Fatalf("exports with no endpoint: meters %v, tracer %v, %d interceptors", e.meters != nil, e.tracer != nil, len(e.interceptors()))
	}
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, the manager exports its Prometheus
// registry's metrics (the operator's own among them) and a span for each
// client call it makes to a store.
func TestOTLPExportWhenConfigured(t *testing.T) {
	c := &otlptest.Collector{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	e, err := newOTLPExport(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	store, err := sqlite.OpenMemory(t.Context(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	client := runtime.NewClient(store, runtime.ClientInterceptors(e.interceptors()...))
	if err := client.Start(t.Context(), "from-apply", "Hello", `"k8s"`); err != nil {
		t.Fatal(err)
	}
	if err := e.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if spans := c.Spans(); !slices.Contains(spans, "start Hello") {
		t.Errorf("span of the client's start not exported; spans: %v", spans)
	}
	if metrics := c.Metrics(); !slices.Contains(metrics, "duroxide_operator_start_latency_seconds") {
		t.Errorf("the operator's start latency not exported; metrics: %v", metrics)
	}
}

package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	colmetric "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
)

// collector is an OTLP/HTTP endpoint that keeps the names of the spans and
// metrics it is sent.
type collector struct {
	mu      sync.Mutex
	spans   []string
	metrics []string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch r.URL.Path {
	case "/v1/traces":
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err == nil {
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					for _, s := range ss.Spans {
						c.spans = append(c.spans, s.Name)
					}
				}
			}
		}
	case "/v1/metrics":
		var req colmetric.ExportMetricsServiceRequest
		if err := proto.Unmarshal(body, &req); err == nil {
			for _, rm := range req.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					for _, m := range sm.Metrics {
						c.metrics = append(c.metrics, m.Name)
					}
				}
			}
		}
	}
	w.WriteHeader(http.StatusOK)
}

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
	c := &collector{}
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
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.spans, "start Hello") {
		t.Errorf("span of the client's start not exported; spans: %v", c.spans)
	}
	if !slices.Contains(c.metrics, "duroxide_operator_start_latency_seconds") {
		t.Errorf("the operator's start latency not exported; metrics: %v", c.metrics)
	}
}

// Package otlptest is an OTLP/HTTP endpoint for tests: it keeps the names
// of the spans and metrics it is sent, and the paths they came on.
package otlptest

import (
	"io"
	"net/http"
	"slices"
	"sync"

	colmetric "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Collector is an http.Handler; serve it with httptest.NewServer and point
// OTEL_EXPORTER_OTLP_ENDPOINT at the server's URL.
type Collector struct {
	mu      sync.Mutex
	paths   []string
	spans   []string
	metrics []string
}

func (c *Collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paths = append(c.paths, r.URL.Path)
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

// Paths are the URL paths of the requests received, in order.
func (c *Collector) Paths() []string { return c.copyOf(c.paths) }

// Spans are the names of the spans received.
func (c *Collector) Spans() []string { return c.copyOf(c.spans) }

// Metrics are the names of the metrics received (once per export).
func (c *Collector) Metrics() []string { return c.copyOf(c.metrics) }

func (c *Collector) copyOf(s []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(s)
}

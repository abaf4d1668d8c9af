package otlp_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/duroxide/duroxide-go/otlp"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/samples"
	"github.com/duroxide/duroxide-go/worker"
)

// otlpCollector is an OTLP/HTTP endpoint that keeps the span names and the
// paths it was sent.
type otlpCollector struct {
	mu    sync.Mutex
	paths []string
	spans []string
}

func (c *otlpCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paths = append(c.paths, r.URL.Path)
	if r.URL.Path == "/v1/traces" {
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
	}
	w.WriteHeader(http.StatusOK)
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, a worker whose Exporters is FromEnv
// exports its spans and metrics over OTLP/HTTP; what it holds is flushed
// when it stops.
func TestWorkerExportsOTLPWhenConfigured(t *testing.T) {
	collector := &otlpCollector{}
	srv := httptest.NewServer(collector)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	store := pgtest.Open(t)
	reg := runtime.NewRegistry()
	samples.Register(reg)
	w := worker.New(reg, worker.Config{Pool: "p", Schema: store.Schema(), HealthAddr: "127.0.0.1:0", MetricsAddr: "0"},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	w.Open = func(context.Context) (provider.Provider, error) { return pgtest.OpenSchema(t, store.Schema()), nil }
	w.Exporters = otlp.FromEnv
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	health, _ := w.Addrs()
	waitReady(t, "http://"+health.String()+"/readyz")
	c := runtime.NewClient(store)
	if err := c.Start(t.Context(), "traced", "Hello", "otlp"); err != nil {
		t.Fatal(err)
	}
	if st, err := c.Wait(timeout(t, time.Minute), "traced"); err != nil || st.Status != runtime.StatusCompleted {
		t.Fatalf("instance: %+v %v", st, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	collector.mu.Lock()
	defer collector.mu.Unlock()
	for _, path := range []string{"/v1/traces", "/v1/metrics"} {
		if !slices.Contains(collector.paths, path) {
			t.Errorf("nothing exported to %s (requests: %v)", path, collector.paths)
		}
	}
	for _, span := range []string{"turn Hello", "activity Greet"} {
		if !slices.Contains(collector.spans, span) {
			t.Errorf("span %q not exported; got %v", span, collector.spans)
		}
	}
}

func waitReady(t *testing.T, url string) {
	t.Helper()
	for range 200 {
		if resp, err := http.Get(url); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never ready", url)
}

func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

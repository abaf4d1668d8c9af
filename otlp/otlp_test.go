package otlp_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/otlp"
	"github.com/duroxide/duroxide-go/otlp/otlptest"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/samples"
	"github.com/duroxide/duroxide-go/worker"
)

// With OTEL_EXPORTER_OTLP_ENDPOINT set, a worker whose Exporters is FromEnv
// exports its spans and metrics over OTLP/HTTP; what it holds is flushed
// when it stops.
func TestWorkerExportsOTLPWhenConfigured(t *testing.T) {
	collector := &otlptest.Collector{}
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
	for _, path := range []string{"/v1/traces", "/v1/metrics"} {
		if !slices.Contains(collector.Paths(), path) {
			t.Errorf("nothing exported to %s (requests: %v)", path, collector.Paths())
		}
	}
	for _, span := range []string{"turn Hello", "activity Greet"} {
		if !slices.Contains(collector.Spans(), span) {
			t.Errorf("span %q not exported; got %v", span, collector.Spans())
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

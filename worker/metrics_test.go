package worker_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/duroxide/duroxide-go/internal/metricdocs"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/samples"
	"github.com/duroxide/duroxide-go/worker"
)

// A worker's /metrics after the Hello, Chain and Retry samples ran counts
// exactly what ran: each sample's committed turns by outcome, each
// activity's attempts by outcome, the retry sample's two retries and its
// two backoff timers.
func TestWorkerMetricsCountWhatRan(t *testing.T) {
	store := pgtest.Open(t)
	reg := runtime.NewRegistry()
	samples.Register(reg)
	w := worker.New(reg, worker.Config{Pool: "p", Schema: store.Schema(), HealthAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0"},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	w.Open = func(ctx context.Context) (provider.Provider, error) {
		p, err := postgres.Open(ctx, pgtest.URL(t), postgres.Options{Schema: store.Schema(), MeterProvider: w.MeterProvider()})
		if err == nil {
			t.Cleanup(func() { _ = p.Close() })
		}
		return p, err
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	health, metrics := w.Addrs()
	waitReady(t, "http://"+health.String()+"/readyz")

	c := runtime.NewClient(store)
	// The flaky service counts calls per instance ID in memory: each run
	// takes new IDs.
	suffix := "-" + store.Schema()
	for id, start := range map[string][2]any{"hello": {"Hello", "metrics"}, "chain": {"Chain", "abc"}, "retry": {"Retry", "pay-1"}} {
		if err := c.Start(t.Context(), id+suffix, start[0].(string), start[1]); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"hello", "chain", "retry"} {
		if st, err := c.Wait(timeout(t, time.Minute), id+suffix); err != nil || st.Status != runtime.StatusCompleted {
			t.Fatalf("%s: %+v %v", id, st, err)
		}
	}
	want := []struct {
		family string
		labels map[string]string
		value  float64
	}{
		// Hello: the turn that schedules Greet, the one that completes.
		{"duroxide_turns_total", map[string]string{"orchestration": "Hello", "outcome": "Running"}, 1},
		{"duroxide_turns_total", map[string]string{"orchestration": "Hello", "outcome": "Completed"}, 1},
		// Chain: one turn per step, then the one that completes.
		{"duroxide_turns_total", map[string]string{"orchestration": "Chain", "outcome": "Running"}, 3},
		{"duroxide_turns_total", map[string]string{"orchestration": "Chain", "outcome": "Completed"}, 1},
		// Retry: three attempts and two backoff timers, each answered by a turn.
		{"duroxide_turns_total", map[string]string{"orchestration": "Retry", "outcome": "Running"}, 5},
		{"duroxide_turns_total", map[string]string{"orchestration": "Retry", "outcome": "Completed"}, 1},
		{"duroxide_activities_total", map[string]string{"activity": "Greet", "outcome": "completed"}, 1},
		{"duroxide_activities_total", map[string]string{"activity": "Reverse", "outcome": "completed"}, 1},
		{"duroxide_activities_total", map[string]string{"activity": "Upper", "outcome": "completed"}, 1},
		{"duroxide_activities_total", map[string]string{"activity": "Exclaim", "outcome": "completed"}, 1},
		{"duroxide_activities_total", map[string]string{"activity": "FlakyCharge", "outcome": "failed"}, 2},
		{"duroxide_activities_total", map[string]string{"activity": "FlakyCharge", "outcome": "completed"}, 1},
		{"duroxide_activity_retries_total", map[string]string{"activity": "FlakyCharge"}, 2},
		{"duroxide_activity_duration_seconds", map[string]string{"activity": "FlakyCharge", "outcome": "failed"}, 2},
		{"duroxide_activity_schedule_to_start_seconds", map[string]string{"activity": "FlakyCharge"}, 3},
		{"duroxide_timer_lateness_seconds", nil, 2},
		{"duroxide_worker_ready", nil, 1},
	}
	// A turn is counted once its commit returns, which Wait may see
	// first: scrape until the last turns are in (or the counts are wrong).
	var families map[string]*dto.MetricFamily
	var wrong []string
	for range 50 {
		families = scrape(t, "http://"+metrics.String()+"/metrics")
		wrong = wrong[:0]
		for _, w := range want {
			if got, ok := sampleValue(families, w.family, w.labels); !ok || got != w.value {
				wrong = append(wrong, fmt.Sprintf("%s%v = %v (found %v), want %v", w.family, w.labels, got, ok, w.value))
			}
		}
		if len(wrong) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, w := range wrong {
		t.Error(w)
	}
	// The store's own: its commit batches and history cache, by store.
	for _, family := range []string{"duroxide_store_batch_size", "duroxide_store_batch_duration_seconds"} {
		if n, ok := sampleValue(families, family, map[string]string{"store": "postgres", "operation": "commit"}); !ok || n < 1 {
			t.Errorf("%s: %v batches (found %v), want some", family, n, ok)
		}
	}
	if n, ok := sampleValue(families, "duroxide_store_history_cache_lookups_total", map[string]string{"store": "postgres", "result": "hit"}); !ok || n < 1 {
		t.Errorf("history cache hits: %v (found %v), want some: every sample's later turns read their history from it", n, ok)
	}
	documented, err := metricdocs.Documented("..")
	if err != nil {
		t.Fatal(err)
	}
	for name := range families {
		if strings.HasPrefix(name, "duroxide_") && !documented[metricdocs.Family(name)] {
			t.Errorf("the worker exports %s, which %s does not document", name, metricdocs.Page)
		}
	}
	for _, absent := range []string{"duroxide_poison_total", "duroxide_nondeterminism_total", "duroxide_lock_losses_total"} {
		if f := families[absent]; f != nil && len(f.Metric) > 0 {
			t.Errorf("%s has samples after a clean run: %v", absent, f.Metric)
		}
	}
	if f := families["duroxide_turns_total"]; f != nil {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == "instance" || strings.Contains(l.GetValue(), "hello") {
					t.Errorf("turns carry an instance label: %v", m)
				}
			}
		}
	}
}

// scrape reads a Prometheus text exposition into its families.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	body := fetch(t, url)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse %s: %v\n%s", url, err, body)
	}
	return families
}

// sampleValue is metricdocs.Value of the named family.
func sampleValue(families map[string]*dto.MetricFamily, family string, labels map[string]string) (float64, bool) {
	return metricdocs.Value(families[family], labels)
}

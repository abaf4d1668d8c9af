package telemetry_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/telemetry"
)

// ObserveStore reads the store at each collection: a queued start shows as
// pending and as backlog of its orchestration, labelled with the caller's
// attributes; after Unregister nothing is read.
func TestObserveStore(t *testing.T) {
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "store.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	reg, err := telemetry.ObserveStore(mp, store, 5*time.Second, attribute.String("store", "test"))
	if err != nil {
		t.Fatal(err)
	}
	if err := runtime.NewClient(store).Start(t.Context(), "queued", "Nobody", nil); err != nil {
		t.Fatal(err)
	}
	got := collect(t, reader)
	for _, c := range []struct {
		series string
		want   int64
	}{
		{"duroxide.store.instances|status=pending|store=test", 1},
		{"duroxide.store.instances|status=running|store=test", 0},
		{"duroxide.store.queue.depth|queue=orchestrator|store=test", 1},
		{"duroxide.store.backlog|kind=orchestration|name=Nobody|store=test", 1},
	} {
		if v, ok := got[c.series]; !ok || v != float64(c.want) {
			t.Errorf("%s = %v (found %v), want %d", c.series, v, ok, c.want)
		}
	}
	if err := reg.Unregister(); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, reader); len(got) != 0 {
		t.Errorf("after Unregister: %v", got)
	}
}

// collect reads the gauges into "name|k=v|k=v" keys (attributes sorted).
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	key := func(name string, set attribute.Set) string {
		for _, kv := range set.ToSlice() {
			name += "|" + string(kv.Key) + "=" + kv.Value.String()
		}
		return name
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out[key(m.Name, p.Attributes)] = float64(p.Value)
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					out[key(m.Name, p.Attributes)] = p.Value
				}
			}
		}
	}
	return out
}

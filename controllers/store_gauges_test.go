package controllers

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	"github.com/duroxide/duroxide-go/provider"
)

// Each reading becomes the pool's series; a failed read keeps the last
// values and says the store is unreachable; a forgotten pool has none.
func TestStoreGauges(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	pool := types.NamespacedName{Namespace: "ns", Name: "p"}
	good := poolReading{store: "pg/url/duroxide", at: at,
		metrics: provider.SystemMetrics{Running: 3, Stalled: 1, Completed: 7, Pending: 2},
		depths:  provider.QueueDepths{Orchestrator: 4, Worker: 5, OldestWorker: at.Add(-90 * time.Second)},
		backlog: provider.Backlog{Activities: []provider.NamedBacklog{{Name: "Greet", Ready: 5, Oldest: at.Add(-90 * time.Second)}}}}
	for _, tc := range []struct {
		name     string
		readings []poolReading
		forget   bool
		want     map[string]float64 // series (labels after namespace and pool) to value
	}{
		{name: "never read", readings: []poolReading{{at: at, err: errors.New("down")}},
			want: map[string]float64{"duroxide_store_reachable": 0, "duroxide_store_instances|running": -1}},
		{name: "read", readings: []poolReading{good},
			want: map[string]float64{"duroxide_store_reachable": 1, "duroxide_store_instances|running": 3,
				"duroxide_store_instances|stalled": 1, "duroxide_store_instances|pending": 2,
				"duroxide_store_queue_depth|worker": 5, "duroxide_store_queue_oldest_age_seconds|worker": 90,
				"duroxide_store_queue_oldest_age_seconds|orchestrator": 0,
				"duroxide_store_backlog|activity|Greet":                5, "duroxide_store_backlog_oldest_age_seconds|activity|Greet": 90}},
		{name: "read, then a failure", readings: []poolReading{good, {at: at.Add(time.Minute), err: errors.New("down")}},
			want: map[string]float64{"duroxide_store_reachable": 0, "duroxide_store_instances|running": 3,
				"duroxide_store_read_timestamp_seconds": float64(at.Add(time.Minute).Unix())}},
		{name: "forgotten", readings: []poolReading{good}, forget: true,
			want: map[string]float64{"duroxide_store_reachable": -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &storeGauges{}
			for _, r := range tc.readings {
				g.record(pool, r)
			}
			if tc.forget {
				g.forget(pool)
			}
			got := seriesOf(t, g)
			for series, want := range tc.want {
				v, ok := got[series]
				switch {
				case want < 0 && ok:
					t.Errorf("%s = %v, want no such series", series, v)
				case want >= 0 && (!ok || v != want):
					t.Errorf("%s = %v (found %v), want %v", series, v, ok, want)
				}
			}
		})
	}
}

// Pools on one schema report one store's values, each series labelled with
// the store, so that a query can count the store once.
func TestStoreGaugesNameTheStore(t *testing.T) {
	g := &storeGauges{}
	reading := poolReading{at: time.Unix(1_800_000_000, 0), metrics: provider.SystemMetrics{Running: 2},
		backlog: provider.Backlog{Orchestrations: []provider.NamedBacklog{{Name: "Hello", Ready: 1}}}}
	for _, pool := range []string{"gpu", "samples"} {
		r := reading
		r.store = (storeConfig{secret: "pg", key: "url", schema: "duroxide"}).label()
		g.record(types.NamespacedName{Namespace: "ns", Name: pool}, r)
	}
	perPool, perStore := seriesOf(t, g, "namespace"), seriesOf(t, g, "namespace", "pool")
	if len(perStore) == 0 || len(perPool) != 2*len(perStore) {
		t.Fatalf("%d series of the two pools, %d of their store: want twice as many", len(perPool), len(perStore))
	}
	for series := range perStore {
		if !strings.Contains(series, "|pg/url/duroxide") {
			t.Errorf("%s: no store label pg/url/duroxide", series)
		}
	}
}

// seriesOf collects g into "family|label|label" keys (labels in name order),
// the labels named in omit left out (default: namespace, pool and store).
func seriesOf(t *testing.T, g prometheus.Collector, omit ...string) map[string]float64 {
	t.Helper()
	if len(omit) == 0 {
		omit = []string{"namespace", "pool", "store"}
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(g)
	if _, err := testutil.GatherAndCount(reg); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.Metric {
			key := f.GetName()
			for _, l := range m.Label {
				if !slices.Contains(omit, l.GetName()) {
					key += "|" + l.GetValue()
				}
			}
			out[key] = m.GetGauge().GetValue()
		}
	}
	return out
}

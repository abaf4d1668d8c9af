package controllers

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/duroxide/duroxide-go/provider"
)

// storeGauges exports each pool's store as the WorkerPool reconciler last
// read it (every --pool-status-interval). Only the leader reconciles, so
// only one replica of the operator reports a pool: summing the series
// across replicas counts each store once. Workers export no store-wide
// values for the same reason. Pools on one schema report the same values:
// the store label says which series are one store's, to aggregate with max.
type storeGauges struct {
	mu    sync.Mutex
	pools map[types.NamespacedName]poolReading
}

// poolReading is one read of a pool's store (storeConfig.label); err is
// set when it failed, ok once a read has succeeded.
type poolReading struct {
	store   string
	at      time.Time
	err     error
	ok      bool
	metrics provider.SystemMetrics
	depths  provider.QueueDepths
	backlog provider.Backlog
}

var (
	storeReachableDesc = prometheus.NewDesc("duroxide_store_reachable",
		"1 when the operator's last read of the pool's store succeeded, 0 when it failed.", []string{"namespace", "pool", "store"}, nil)
	storeReadDesc = prometheus.NewDesc("duroxide_store_read_timestamp_seconds",
		"When the operator last read the pool's store (Unix seconds).", []string{"namespace", "pool", "store"}, nil)
	storeInstancesDesc = prometheus.NewDesc("duroxide_store_instances",
		"Instances in the pool's store by status (running counts the stalled ones; pending: queued starts).", []string{"namespace", "pool", "store", "status"}, nil)
	storeQueueDepthDesc = prometheus.NewDesc("duroxide_store_queue_depth",
		"Messages in the pool's store by queue: orchestrator and worker are ready, delayed not yet visible, locked held.", []string{"namespace", "pool", "store", "queue"}, nil)
	storeQueueAgeDesc = prometheus.NewDesc("duroxide_store_queue_oldest_age_seconds",
		"How long the oldest ready message of the queue had waited when the store was read (0: none waits).", []string{"namespace", "pool", "store", "queue"}, nil)
	storeBacklogDesc = prometheus.NewDesc("duroxide_store_backlog",
		"Ready messages by the orchestration or activity they are for: what to autoscale a pool on.", []string{"namespace", "pool", "store", "kind", "name"}, nil)
	storeBacklogAgeDesc = prometheus.NewDesc("duroxide_store_backlog_oldest_age_seconds",
		"How long the oldest ready message of the orchestration or activity had waited when the store was read.", []string{"namespace", "pool", "store", "kind", "name"}, nil)
)

// record keeps a pool's latest reading.
func (g *storeGauges) record(pool types.NamespacedName, r poolReading) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pools == nil {
		g.pools = map[types.NamespacedName]poolReading{}
	}
	if r.err != nil {
		// Keep the last good values: a failed read says nothing new about them.
		last := g.pools[pool]
		last.store, last.at, last.err = r.store, r.at, r.err
		r = last
	} else {
		r.ok = true
	}
	g.pools[pool] = r
}

// forget drops a deleted pool's series.
func (g *storeGauges) forget(pool types.NamespacedName) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.pools, pool)
}

func (g *storeGauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{storeReachableDesc, storeReadDesc, storeInstancesDesc, storeQueueDepthDesc,
		storeQueueAgeDesc, storeBacklogDesc, storeBacklogAgeDesc} {
		ch <- d
	}
}

func (g *storeGauges) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for pool, r := range g.pools {
		for _, m := range r.series(pool) {
			ch <- m
		}
	}
}

// series are the metrics of one reading.
func (r poolReading) series(pool types.NamespacedName) []prometheus.Metric {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
		return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{pool.Namespace, pool.Name, r.store}, labels...)...)
	}
	reachable := 1.0
	if r.err != nil {
		reachable = 0
	}
	out := []prometheus.Metric{gauge(storeReachableDesc, reachable), gauge(storeReadDesc, float64(r.at.UnixMilli())/1000)}
	if !r.ok {
		return out // never read: no values to report
	}
	m, q := r.metrics, r.depths
	for status, n := range m.ByStatus() {
		out = append(out, gauge(storeInstancesDesc, float64(n), status))
	}
	for queue, n := range q.ByQueue() {
		out = append(out, gauge(storeQueueDepthDesc, float64(n), queue))
	}
	out = append(out, gauge(storeQueueAgeDesc, provider.WaitedAt(r.at, q.OldestOrchestrator).Seconds(), "orchestrator"),
		gauge(storeQueueAgeDesc, provider.WaitedAt(r.at, q.OldestWorker).Seconds(), "worker"))
	for kind, rows := range map[string][]provider.NamedBacklog{"orchestration": r.backlog.Orchestrations, "activity": r.backlog.Activities} {
		for _, b := range rows {
			out = append(out, gauge(storeBacklogDesc, float64(b.Ready), kind, b.Name),
				gauge(storeBacklogAgeDesc, provider.WaitedAt(r.at, b.Oldest).Seconds(), kind, b.Name))
		}
	}
	return out
}

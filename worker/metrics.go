package worker

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsHandler serves the Go and process metrics, the worker's readiness,
// the runtime's metrics (docs/observability.md) and the store's queue
// depths and instance counts, read at scrape time (so an autoscaler can
// size the pool by queue depth).
func (w *Worker) metricsHandler() http.Handler {
	reg := w.metricsRegistry
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "duroxide_worker_ready",
			Help: "1 when the worker runs its dispatchers, 0 while connecting or draining."},
			func() float64 {
				if w.ready.Load() {
					return 1
				}
				return 0
			}),
		&storeCollector{w: w},
	)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

var (
	queueDepthDesc = prometheus.NewDesc("duroxide_queue_depth",
		"Messages waiting in the pool's store, by queue (orchestrator, worker, delayed, locked).", []string{"queue"}, nil)
	instancesDesc = prometheus.NewDesc("duroxide_instances",
		"Instances in the pool's store, by status.", []string{"status"}, nil)
)

// storeCollector reads the store's counts when scraped.
type storeCollector struct{ w *Worker }

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDepthDesc
	ch <- instancesDesc
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.w.store.Load()
	if p == nil {
		return
	}
	admin := *p
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if q, err := admin.GetQueueDepths(ctx); err == nil {
		for queue, n := range map[string]int64{"orchestrator": q.Orchestrator, "worker": q.Worker, "delayed": q.Delayed, "locked": q.Locked} {
			ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(n), queue)
		}
	}
	if m, err := admin.GetSystemMetrics(ctx); err == nil {
		for status, n := range map[string]int64{"running": m.Running, "completed": m.Completed, "failed": m.Failed, "terminated": m.Terminated} {
			ch <- prometheus.MustNewConstMetric(instancesDesc, prometheus.GaugeValue, float64(n), status)
		}
	}
}

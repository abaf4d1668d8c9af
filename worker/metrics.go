package worker

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsHandler serves the Go and process metrics, the worker's readiness
// and the runtime's metrics (docs/observability.md). Store-wide values
// (queue depths, instance counts, backlog) are not here: every replica
// would report the same ones, and each read costs the store. The operator
// reports them once per pool.
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
	)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

package controllers

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
)

// The operator's own metrics, served with controller-runtime's (reconcile
// counts, errors and durations per controller, work queue depth and
// latency) on the manager's metrics endpoint.
var (
	mirrorMetrics = newStatusMetrics()
	// poolStoreGauges are the pools' stores as last read (store_gauges.go).
	poolStoreGauges = &storeGauges{}
)

func init() {
	metrics.Registry.MustRegister(mirrorMetrics.statusLag, mirrorMetrics.startLatency, poolStoreGauges)
}

// statusMetrics measure the Orchestrations' status writes.
type statusMetrics struct {
	statusLag    *prometheus.HistogramVec
	startLatency prometheus.Histogram
}

func newStatusMetrics() *statusMetrics {
	return &statusMetrics{
		statusLag: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "duroxide_operator_status_lag_seconds",
			Help:    "Time from an instance's change in the store (started, finished) to the Orchestration's status showing it, by phase.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300},
		}, []string{"phase"}),
		startLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "duroxide_operator_start_latency_seconds",
			Help:    "Time from an Orchestration's creation (kubectl apply; whole seconds) to its instance's first turn.",
			Buckets: []float64{0.5, 1, 2, 5, 10, 30, 60, 300, 900},
		}),
	}
}

// observeStatusWrite records, for a status write that moved the phase from
// before, how long after the store's change it came and, for the first
// phase past Pending, how long after the object's creation the instance
// started. now is the write's time.
func (m *statusMetrics) observeStatusWrite(o *v1.Orchestration, before v1.OrchestrationPhase, now time.Time) {
	s := &o.Status
	if s.Phase == before || s.Phase == "" || s.Phase == v1.PhasePending {
		return
	}
	started := before == "" || before == v1.PhasePending
	// The store's change: the first turn, or the end. Other moves (into
	// and out of Stalled) have no time of their own in the status.
	var changed *metav1.Time
	switch {
	case finished(s.Phase):
		changed = s.CompletionTime
	case started:
		changed = s.StartTime
	}
	if changed != nil {
		m.statusLag.WithLabelValues(string(s.Phase)).Observe(max(now.Sub(changed.Time), 0).Seconds())
	}
	if started && s.StartTime != nil && !o.CreationTimestamp.IsZero() {
		m.startLatency.Observe(max(s.StartTime.Sub(o.CreationTimestamp.Time), 0).Seconds())
	}
}

package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/duroxide/duroxide-go/provider"
)

// ObserveStore reports a store's instance counts, queue depths and backlog
// by name as gauges on mp, read from the store at each collection (bounded
// by readTimeout):
//
//	duroxide.store.instances{status}
//	duroxide.store.queue.depth{queue}, duroxide.store.queue.oldest_age{queue}
//	duroxide.store.backlog{kind, name}, duroxide.store.backlog.oldest_age{kind, name}
//
// attrs label every value (the store's name, for example). Observe a store
// in one process only: every process would report the same values, and a
// sum across them would count the store many times. The operator does this
// for each WorkerPool; use ObserveStore where no operator runs (an
// embedded runtime). Unregister the returned registration to stop.
func ObserveStore(mp metric.MeterProvider, store provider.Admin, readTimeout time.Duration, attrs ...attribute.KeyValue) (metric.Registration, error) {
	m := mp.Meter(scope)
	instances, err := m.Int64ObservableGauge("duroxide.store.instances", metric.WithUnit("{instance}"),
		metric.WithDescription("Instances in the store by status (running counts the stalled ones; pending: queued starts)."))
	if err != nil {
		return nil, err
	}
	depth, err := m.Int64ObservableGauge("duroxide.store.queue.depth", metric.WithUnit("{message}"),
		metric.WithDescription("Messages by queue: orchestrator and worker are ready, delayed not yet visible, locked held."))
	if err != nil {
		return nil, err
	}
	queueAge, err := m.Float64ObservableGauge("duroxide.store.queue.oldest_age", metric.WithUnit("s"),
		metric.WithDescription("How long the oldest ready message of the queue has waited (0: none waits)."))
	if err != nil {
		return nil, err
	}
	backlog, err := m.Int64ObservableGauge("duroxide.store.backlog", metric.WithUnit("{message}"),
		metric.WithDescription("Ready messages by the orchestration or activity they are for."))
	if err != nil {
		return nil, err
	}
	backlogAge, err := m.Float64ObservableGauge("duroxide.store.backlog.oldest_age", metric.WithUnit("s"),
		metric.WithDescription("How long the oldest ready message of the orchestration or activity has waited."))
	if err != nil {
		return nil, err
	}
	observe := func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, readTimeout)
		defer cancel()
		now := time.Now()
		with := func(kv ...attribute.KeyValue) metric.ObserveOption {
			return metric.WithAttributes(append(kv, attrs...)...)
		}
		s, err := store.GetSystemMetrics(ctx)
		if err != nil {
			return err
		}
		for status, n := range s.ByStatus() {
			o.ObserveInt64(instances, n, with(attribute.String("status", status)))
		}
		q, err := store.GetQueueDepths(ctx)
		if err != nil {
			return err
		}
		for queue, n := range q.ByQueue() {
			o.ObserveInt64(depth, n, with(attribute.String("queue", queue)))
		}
		o.ObserveFloat64(queueAge, provider.WaitedAt(now, q.OldestOrchestrator).Seconds(), with(attribute.String("queue", "orchestrator")))
		o.ObserveFloat64(queueAge, provider.WaitedAt(now, q.OldestWorker).Seconds(), with(attribute.String("queue", "worker")))
		b, err := store.GetBacklog(ctx)
		if err != nil {
			return err
		}
		for kind, rows := range map[string][]provider.NamedBacklog{"orchestration": b.Orchestrations, "activity": b.Activities} {
			for _, r := range rows {
				labels := with(attribute.String("kind", kind), attribute.String("name", r.Name))
				o.ObserveInt64(backlog, r.Ready, labels)
				o.ObserveFloat64(backlogAge, provider.WaitedAt(now, r.Oldest).Seconds(), labels)
			}
		}
		return nil
	}
	return m.RegisterCallback(observe, instances, depth, queueAge, backlog, backlogAge)
}

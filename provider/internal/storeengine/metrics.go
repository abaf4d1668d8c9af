package storeengine

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// meterName is the instrumentation scope of the stores' metrics.
const meterName = "github.com/duroxide/duroxide-go/provider"

// storeMetrics are a store's instruments: its commit batches, and its
// history cache's lookups and evictions (read from the cache's counts at
// each collection, so the hot path only adds to atomics).
type storeMetrics struct {
	batchSize     metric.Int64Histogram
	batchDuration metric.Float64Histogram
	store         attribute.KeyValue
	// byOperation are the attributes of each operation's batches, built once.
	byOperation sync.Map // operation -> metric.MeasurementOption
}

// newStoreMetrics creates the instruments on mp (no-op when nil) for the
// store named store ("postgres", "sqlite").
func (e *Engine) newStoreMetrics(mp metric.MeterProvider, store string) *storeMetrics {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	m := mp.Meter(meterName)
	x := &storeMetrics{store: attribute.String("store", store)}
	var err error
	if x.batchSize, err = m.Int64Histogram("duroxide.store.batch.size", metric.WithUnit("{request}"),
		metric.WithDescription("Requests (turn commits, activity results, writes) sharing one transaction, by store and operation."),
		metric.WithExplicitBucketBoundaries(1, 2, 4, 8, 16, 32, 64, 128)); err != nil {
		x.batchSize, _ = noop.NewMeterProvider().Meter(meterName).Int64Histogram("")
	}
	if x.batchDuration, err = m.Float64Histogram("duroxide.store.batch.duration", metric.WithUnit("s"),
		metric.WithDescription("Time to run and commit one batch's transaction, by store and operation."),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5)); err != nil {
		x.batchDuration, _ = noop.NewMeterProvider().Meter(meterName).Float64Histogram("")
	}
	lookups, err := m.Int64ObservableCounter("duroxide.store.history_cache.lookups", metric.WithUnit("{lookup}"),
		metric.WithDescription("History cache lookups by result (hit, miss)."))
	if err != nil {
		return x
	}
	evictions, err := m.Int64ObservableCounter("duroxide.store.history_cache.evictions", metric.WithUnit("{execution}"),
		metric.WithDescription("Executions the history cache dropped to make room."))
	if err != nil {
		return x
	}
	hit := metric.WithAttributes(x.store, attribute.String("result", "hit"))
	miss := metric.WithAttributes(x.store, attribute.String("result", "miss"))
	byStore := metric.WithAttributes(x.store)
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		hits, misses, evicted := e.Hist.Counts()
		o.ObserveInt64(lookups, hits, hit)
		o.ObserveInt64(lookups, misses, miss)
		o.ObserveInt64(evictions, evicted, byStore)
		return nil
	}, lookups, evictions)
	if err == nil && e.cfg.Closed != nil {
		// A closed store's cache is reported no more (and not kept alive).
		go func() {
			<-e.cfg.Closed
			_ = reg.Unregister()
		}()
	}
	return x
}

// RecordBatch records one batch of requests run in one transaction.
func (e *Engine) RecordBatch(ctx context.Context, operation string, requests int, took time.Duration) {
	opts, ok := e.metrics.byOperation.Load(operation)
	if !ok {
		opts, _ = e.metrics.byOperation.LoadOrStore(operation,
			metric.WithAttributeSet(attribute.NewSet(e.metrics.store, attribute.String("operation", operation))))
	}
	e.metrics.batchSize.Record(ctx, int64(requests), opts.(metric.MeasurementOption))
	e.metrics.batchDuration.Record(ctx, took.Seconds(), opts.(metric.MeasurementOption))
}

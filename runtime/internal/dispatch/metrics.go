package dispatch

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/duroxide/duroxide-go/provider"
)

// meterName is the instrumentation scope of the runtime's metrics.
const meterName = "github.com/duroxide/duroxide-go/runtime"

// metrics are the runtime's instruments. Their attributes are names from
// code (orchestration, activity) and small enums, never instance IDs, so
// the series stay few.
type metrics struct {
	// sets caches the attribute sets of the measurements, by their values:
	// building one allocates, and the same few recur on every turn.
	sets sync.Map // attrKey -> metric.MeasurementOption

	turns            metric.Int64Counter
	turnDuration     metric.Float64Histogram
	activities       metric.Int64Counter
	activityDuration metric.Float64Histogram
	scheduleToStart  metric.Float64Histogram
	retries          metric.Int64Counter
	timerLateness    metric.Float64Histogram
	poison           metric.Int64Counter
	nondeterminism   metric.Int64Counter
	stalls           metric.Int64Counter
	lockLosses       metric.Int64Counter
}

// newMetrics creates the instruments on mp (a no-op provider when nil).
func newMetrics(mp metric.MeterProvider) *metrics {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	m := mp.Meter(meterName)
	seconds := metric.WithExplicitBucketBoundaries(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
	var x metrics
	x.turns = counter(m, "duroxide.turns", "{turn}", "Orchestration turns run, by orchestration and outcome (the status committed; declined: a fast path's turn run again on the usual path; error: handed back).")
	x.turnDuration = histogram(m, "duroxide.turn.duration", "Time to run and commit a turn, by orchestration.", seconds)
	x.activities = counter(m, "duroxide.activities", "{attempt}", "Activity attempts finished, by activity and outcome (completed, failed, cancelled, lost, interrupted).")
	x.activityDuration = histogram(m, "duroxide.activity.duration", "Time an activity attempt ran, by activity and outcome.", seconds)
	x.scheduleToStart = histogram(m, "duroxide.activity.schedule_to_start", "Time from the turn that queued an activity to a worker starting it, by activity.", seconds)
	x.retries = counter(m, "duroxide.activity.retries", "{attempt}", "Activity attempts scheduled by a retry policy after a failed attempt, by activity.")
	x.timerLateness = histogram(m, "duroxide.timer.lateness", "Time from a timer's due time to the turn that delivers it.", seconds)
	x.poison = counter(m, "duroxide.poison", "{item}", "Items failed at the poison limit, by kind (orchestration, activity).")
	x.nondeterminism = counter(m, "duroxide.nondeterminism", "{turn}", "Turns whose code no longer matched the history, by orchestration.")
	x.stalls = counter(m, "duroxide.stalls", "{turn}", "Items handed back with an error to retry later, by kind and error class.")
	x.lockLosses = counter(m, "duroxide.lock_losses", "{item}", "Results discarded because the lock or lease was lost, by kind.")
	return &x
}

func counter(m metric.Meter, name, unit, desc string) metric.Int64Counter {
	c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	if err != nil {
		c, _ = noop.NewMeterProvider().Meter(meterName).Int64Counter(name)
	}
	return c
}

func histogram(m metric.Meter, name, desc string, buckets metric.HistogramOption) metric.Float64Histogram {
	h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), buckets)
	if err != nil {
		h, _ = noop.NewMeterProvider().Meter(meterName).Float64Histogram(name)
	}
	return h
}

// attrKey names an attribute set: up to two key-value pairs.
type attrKey struct{ k1, v1, k2, v2 string }

// attrs returns the measurement option of the attributes k1=v1 and, when
// k2 is set, k2=v2, built once per distinct set.
func (m *metrics) attrs(k1, v1, k2, v2 string) metric.MeasurementOption {
	key := attrKey{k1, v1, k2, v2}
	if o, ok := m.sets.Load(key); ok {
		return o.(metric.MeasurementOption)
	}
	kv := []attribute.KeyValue{attribute.String(k1, v1)}
	if k2 != "" {
		kv = append(kv, attribute.String(k2, v2))
	}
	o, _ := m.sets.LoadOrStore(key, metric.WithAttributeSet(attribute.NewSet(kv...)))
	return o.(metric.MeasurementOption)
}

// turnDone records a turn that ran: outcome is the status it committed,
// "declined" (a fast path's turn, run again) or "error" (handed back).
func (m *metrics) turnDone(ctx context.Context, orchestration string, outcome string, took time.Duration) {
	m.turns.Add(ctx, 1, m.attrs("orchestration", orchestration, "outcome", outcome))
	m.turnDuration.Record(ctx, took.Seconds(), m.attrs("orchestration", orchestration, "", ""))
}

func (m *metrics) activityDone(ctx context.Context, name, outcome string, took time.Duration) {
	set := m.attrs("activity", name, "outcome", outcome)
	m.activities.Add(ctx, 1, set)
	m.activityDuration.Record(ctx, took.Seconds(), set)
}

// activityStarted records how long a queued activity waited for a worker.
func (m *metrics) activityStarted(ctx context.Context, item provider.WorkItem, now time.Time) {
	if item.Time > 0 {
		m.scheduleToStart.Record(ctx, max(now.Sub(time.UnixMilli(item.Time)).Seconds(), 0), m.attrs("activity", item.Name, "", ""))
	}
}

// timersDelivered records the lateness of the timers among a turn's messages.
func (m *metrics) timersDelivered(ctx context.Context, messages []provider.WorkItem, now time.Time) {
	for _, msg := range messages {
		if msg.Kind == provider.WorkTimerFired && msg.FireAt > 0 {
			m.timerLateness.Record(ctx, max(now.Sub(time.UnixMilli(msg.FireAt)).Seconds(), 0))
		}
	}
}

func (m *metrics) poisoned(ctx context.Context, kind string) {
	m.poison.Add(ctx, 1, m.attrs("kind", kind, "", ""))
}

func (m *metrics) nondeterministic(ctx context.Context, orchestration string) {
	m.nondeterminism.Add(ctx, 1, m.attrs("orchestration", orchestration, "", ""))
}

func (m *metrics) stalled(ctx context.Context, kind string, class provider.ErrorClass) {
	m.stalls.Add(ctx, 1, m.attrs("kind", kind, "class", string(class)))
}

func (m *metrics) lockLost(ctx context.Context, kind string) {
	m.lockLosses.Add(ctx, 1, m.attrs("kind", kind, "", ""))
}

func (m *metrics) retried(ctx context.Context, activity string) {
	m.retries.Add(ctx, 1, m.attrs("activity", activity, "", ""))
}

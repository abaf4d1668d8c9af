package dispatch

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/duroxide/duroxide-go/provider"
)

// Options are runtime.Options with the defaults applied; runtime.Options
// documents each field. The two structs have the same fields, so
// runtime.New converts one to the other.
type Options struct {
	OrchestrationConcurrency int
	OrchestrationPollers     int
	OrchestrationBatch       int
	ActivityConcurrency      int
	ActivityTags             provider.TagFilter
	MaxSessions              int
	SessionLockTimeout       time.Duration
	SessionIdleTimeout       time.Duration
	ActivityPollers          int
	OrchestrationLockTimeout time.Duration
	StepTimeout              time.Duration
	Nondeterminism           NondeterminismPolicy
	ActivityLockTimeout      time.Duration
	ActivityRenewInterval    time.Duration
	PollTimeout              time.Duration
	MaxAttempts              int
	RetryBackoff             time.Duration
	MaxRetryBackoff          time.Duration
	DrainTimeout             time.Duration
	Logger                   *slog.Logger
	WorkerID                 string
	HeartbeatInterval        time.Duration
	Interceptors             []Interceptor
	MeterProvider            metric.MeterProvider
}

// NondeterminismPolicy is what a dispatcher does with a nondeterministic turn.
type NondeterminismPolicy int

const (
	// NondeterminismRetry keeps the instance: the turn is handed back with
	// backoff (up to MaxRetryBackoff) and not counted toward the poison limit,
	// the error is logged on every try, and deploying code that matches the
	// history again (a rollback) resumes the instance.
	NondeterminismRetry NondeterminismPolicy = iota
	// NondeterminismFail fails the instance at once (class configuration).
	NondeterminismFail
)

// backoff is the delay before attempt+1 of an abandoned item.
func (o Options) backoff(attempt int) time.Duration {
	d := o.RetryBackoff
	for i := 1; i < attempt && d < o.MaxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, o.MaxRetryBackoff)
}

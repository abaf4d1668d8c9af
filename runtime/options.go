package runtime

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/duroxide/duroxide-go/runtime/internal/dispatch"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// Options tune a Runtime. Zero values take the defaults below.
type Options struct {
	// OrchestrationConcurrency is how many turns run at once (default 32).
	// A turn spends most of its time waiting on the store (fetch, ack), not
	// running orchestration code, so the default keeps the store busy rather
	// than matching the CPU count.
	OrchestrationConcurrency int
	// OrchestrationPollers is how many goroutines fetch ready instances
	// (default 2). A poller fetches only while turn slots are free, as many
	// instances as there are free slots, up to OrchestrationBatch.
	OrchestrationPollers int
	// OrchestrationBatch is how many ready instances one fetch may lock (default 8).
	OrchestrationBatch int
	// ActivityConcurrency is how many activities run at once (default 128, as
	// activities mostly wait on other systems; bound it lower for CPU-heavy ones).
	// Negative disables the activity dispatcher (orchestrations only).
	ActivityConcurrency int
	// ActivityTags says which activities this runtime runs by their tag
	// (WithTag): the zero value, untagged ones only; Tags: those tags only;
	// Tags with Untagged: both; Any: all. A tag no running worker takes
	// leaves its activities queued. The worker binary reads it from
	// DUROXIDE_ACTIVITY_TAGS (ParseTagFilter's form: "gpu,ml", "-,gpu" for
	// untagged too, "*" for all).
	ActivityTags TagFilter
	// MaxSessions is how many activity sessions (WithSession) this runtime
	// owns at once (default 10); negative: it runs no session's activities.
	MaxSessions int
	// SessionLockTimeout is the lease of an owned session (default 30s),
	// renewed every third of it while the session sees work: a runtime
	// that dies loses its sessions to other workers after it.
	SessionLockTimeout time.Duration
	// SessionIdleTimeout is how long a session may see no work before this
	// runtime stops renewing it and lets it go (default 5m).
	SessionIdleTimeout time.Duration
	// ActivityPollers is how many goroutines fetch activities (default 2). A
	// poller fetches only while an execution slot is free, so idle capacity
	// does not turn every enqueue into a stampede of fetches.
	ActivityPollers int
	// OrchestrationLockTimeout is the lock of an instance during a turn
	// (default 30s). It is renewed every third of it while the turn runs; if
	// the process dies the lock lapses and another dispatcher runs the turn.
	OrchestrationLockTimeout time.Duration
	// StepTimeout bounds how long orchestration code may run without yielding
	// to the engine (default 1s, as Temporal's deadlock detection; negative
	// disables it). Code that blocks outside the engine (a channel, a mutex,
	// time.Sleep) fails the turn with a *BlockedError naming where it
	// blocked; the turn is retried with backoff and, at the poison limit, the
	// instance fails with class configuration.
	StepTimeout time.Duration
	// Nondeterminism says what happens when code no longer matches an
	// instance's history (default NondeterminismRetry).
	Nondeterminism NondeterminismPolicy
	// ActivityLockTimeout is the lease of a running activity (default 30s). It is
	// renewed every ActivityRenewInterval, so long activities keep their lease;
	// if the process dies the lease lapses and another worker runs the activity.
	ActivityLockTimeout time.Duration
	// ActivityRenewInterval is how often a running activity's lease is renewed
	// and its instance checked for termination (default ActivityLockTimeout/3,
	// at most 5s).
	ActivityRenewInterval time.Duration
	// PollTimeout is how long an idle dispatcher waits in one fetch (default 1s).
	PollTimeout time.Duration
	// MaxAttempts is the poison limit: an item fetched more often than this is
	// failed instead of retried (default 10).
	MaxAttempts int
	// RetryBackoff and MaxRetryBackoff bound the delay before a failed
	// (abandoned) item is tried again; it doubles per attempt (default 100ms, 30s).
	RetryBackoff    time.Duration
	MaxRetryBackoff time.Duration
	// DrainTimeout is how long Shutdown lets in-flight activities finish before
	// cancelling them and handing their items back (default 10s).
	DrainTimeout time.Duration
	// Logger receives the runtime's logs (default slog.Default()).
	Logger *slog.Logger
	// WorkerID names this runtime in its announcement to the store (default:
	// the host name and a random suffix). A WorkerPool's pods use their name.
	WorkerID string
	// HeartbeatInterval is how often the runtime renews its announcement of the
	// orchestrations and activities it runs, when the store keeps announcements
	// (provider.Workers; default 15s).
	HeartbeatInterval time.Duration
	// Interceptors wrap the runtime's turns, activity attempts and the
	// work each turn schedules, in order: the first is outermost
	// (Interceptor). Runtime.Client's calls go through them too.
	Interceptors []Interceptor
	// MeterProvider receives the runtime's metrics (default: the global
	// one, otel.GetMeterProvider, which records nothing until the program
	// installs a provider). docs/observability.md lists the instruments.
	MeterProvider metric.MeterProvider
}

// NondeterminismPolicy is what a dispatcher does with a nondeterministic
// turn: NondeterminismRetry (the default) or NondeterminismFail.
type NondeterminismPolicy = dispatch.NondeterminismPolicy

const (
	// NondeterminismRetry keeps the instance: the turn is handed back with
	// backoff (up to MaxRetryBackoff) and not counted toward the poison limit,
	// the error is logged on every try, and deploying code that matches the
	// history again (a rollback) resumes the instance.
	NondeterminismRetry = dispatch.NondeterminismRetry
	// NondeterminismFail fails the instance at once (class configuration).
	NondeterminismFail = dispatch.NondeterminismFail
)

func (o Options) withDefaults() Options {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if o.OrchestrationConcurrency <= 0 {
		o.OrchestrationConcurrency = 32
	}
	if o.OrchestrationPollers <= 0 {
		o.OrchestrationPollers = 2
	}
	if o.OrchestrationBatch <= 0 {
		o.OrchestrationBatch = 8
	}
	if o.ActivityConcurrency == 0 {
		o.ActivityConcurrency = 128
	}
	if o.ActivityPollers <= 0 {
		o.ActivityPollers = 2
	}
	def(&o.OrchestrationLockTimeout, 30*time.Second)
	if o.StepTimeout == 0 {
		o.StepTimeout = engine.DefaultStepTimeout
	}
	def(&o.ActivityLockTimeout, 30*time.Second)
	def(&o.ActivityRenewInterval, min(o.ActivityLockTimeout/3, 5*time.Second))
	def(&o.PollTimeout, time.Second)
	def(&o.RetryBackoff, 100*time.Millisecond)
	def(&o.MaxRetryBackoff, 30*time.Second)
	def(&o.DrainTimeout, 10*time.Second)
	def(&o.HeartbeatInterval, 15*time.Second)
	if o.MaxSessions == 0 {
		o.MaxSessions = 10
	}
	def(&o.SessionLockTimeout, 30*time.Second)
	def(&o.SessionIdleTimeout, 5*time.Minute)
	if o.WorkerID == "" {
		o.WorkerID = dispatch.DefaultWorkerID()
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 10
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MeterProvider == nil {
		o.MeterProvider = otel.GetMeterProvider()
	}
	return o
}
